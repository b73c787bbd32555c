// The one retry engine: backoff with jitter, the wait a service asks for, a bound on the time spent,
// a deadline and the run's signal. Each caller gives only its classifier and its attempt.

import { formatSeconds, messageOf } from './format.ts'
import { setTimeout as delay } from 'node:timers/promises'
import type { Logger } from './logger.ts'
import { errorCodes } from './network.ts'

export type GaveUp =
  | { kind: 'retries-spent'; attempts: number }
  | { kind: 'out-of-time'; attempts: number; elapsedMs: number; maxElapsedMs: number }
  | { kind: 'wait-too-long'; askedMs: number; until: number; maxRetryAfterMs: number }

/** Said after the message of its last error: ` (gave up after 3 attempts)`. */
export function gaveUpNote(gaveUp: GaveUp | undefined): string {
  switch (gaveUp?.kind) {
    case undefined:
      return ''
    case 'retries-spent':
      return ` (gave up after ${gaveUp.attempts} attempts)`
    case 'out-of-time':
      return (
        ` (gave up after ${gaveUp.attempts} attempts in ${Math.round(gaveUp.elapsedMs / 1000)} s: ` +
        `retries stop ${Math.round(gaveUp.maxElapsedMs / 1000)} s after the first attempt)`
      )
    case 'wait-too-long':
      return (
        ` (the service asks to wait ${Math.ceil(gaveUp.askedMs / 1000)} s, until ${new Date(gaveUp.until).toISOString()}: ` +
        `longer than the ${Math.round(gaveUp.maxRetryAfterMs / 1000)} s allowed; not retried)`
      )
  }
}

/** The last error made again saying how its retries stopped: by its own `afterRetries` when it has one. */
function afterRetries(error: unknown, gaveUp: GaveUp): unknown {
  const own = (error as { afterRetries?: unknown } | null)?.afterRetries
  if (typeof own === 'function') return (own as (g: GaveUp) => unknown).call(error, gaveUp)
  if (error instanceof Error) return new Error(error.message + gaveUpNote(gaveUp), { cause: error })
  return error
}

export interface RetryPolicy {
  /** Attempts after the first. */
  retries: number
  baseDelayMs: number
  maxDelayMs: number
  /** The longest `retry-after` waited; a call asked to wait longer fails at once, saying when. */
  maxRetryAfterMs: number
  /** No retry starts later than this after the first attempt: a service that stays down fails in minutes. */
  maxElapsedMs: number
  /** The default ends at once with `signal` (the policy's own when none is given). */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>
  random: () => number
  now: () => number
  /** No attempt starts once aborted, and a wait ends at once, rejecting with the reason. */
  signal?: AbortSignal
  /** No retry starts past this time (RetryPolicy.now), whatever maxElapsedMs allows: a budget shared by calls. */
  deadlineAt?: number
}

// Eight retries with backoff capped at 30 s wait at least 45 s in all: a half-minute outage is survived.
export const DEFAULT_RETRIES = 8
export const DEFAULT_MAX_RETRY_AFTER_SECONDS = 120

export function retryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy: RetryPolicy = {
    retries: DEFAULT_RETRIES,
    baseDelayMs: 500,
    maxDelayMs: 30_000,
    maxRetryAfterMs: DEFAULT_MAX_RETRY_AFTER_SECONDS * 1000,
    maxElapsedMs: 180_000,
    random: Math.random,
    now: Date.now,
    ...overrides,
    // The real sleep ends with the signal, so no timer outlives a cancelled run.
    sleep: overrides.sleep ?? ((ms, signal) => delay(ms, undefined, { signal: signal ?? policy.signal })),
  }
  return policy
}

/** Between half and all of base * 2^attempt, capped. */
export function backoffDelay(attempt: number, policy: RetryPolicy): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt)
  return Math.round(ceiling / 2 + (policy.random() * ceiling) / 2)
}

/** Retry (true), retry after the wait the service asked for, fail as it is (false), or fail saying how. */
export type RetryVerdict = boolean | GaveUp | { afterMs: number }
export type Classifier = (error: unknown, now: number) => RetryVerdict

/** What follows a failed attempt (`index` 0 for the first; `startedAt` and `now` on RetryPolicy.now). */
export function decideRetry(
  verdict: RetryVerdict,
  state: { index: number; startedAt: number; now: number },
  policy: RetryPolicy,
): { kind: 'fail'; gaveUp: GaveUp | undefined } | { kind: 'retry'; waitMs: number } {
  if (verdict === false) return { kind: 'fail', gaveUp: undefined }
  if (typeof verdict === 'object' && 'kind' in verdict) return { kind: 'fail', gaveUp: verdict }
  const attempts = state.index + 1
  if (state.index >= policy.retries) {
    return { kind: 'fail', gaveUp: attempts > 1 ? { kind: 'retries-spent', attempts } : undefined }
  }
  const asked = verdict === true ? undefined : verdict.afterMs
  if (asked !== undefined && asked > policy.maxRetryAfterMs) {
    const until = state.now + asked
    return {
      kind: 'fail',
      gaveUp: { kind: 'wait-too-long', askedMs: asked, until, maxRetryAfterMs: policy.maxRetryAfterMs },
    }
  }
  const waitMs = asked === undefined ? backoffDelay(state.index, policy) : asked + policy.random() * 250
  const elapsedMs = state.now - state.startedAt
  const outOfTime = (maxElapsedMs: number) =>
    ({ kind: 'fail', gaveUp: { kind: 'out-of-time', attempts, elapsedMs, maxElapsedMs } }) as const
  if (elapsedMs + waitMs > policy.maxElapsedMs) return outOfTime(policy.maxElapsedMs)
  if (policy.deadlineAt !== undefined && state.now + waitMs > policy.deadlineAt)
    return outOfTime(Math.max(0, policy.deadlineAt - state.startedAt))
  return { kind: 'retry', waitMs }
}

/**
 * Logs each retry with `describe` (never a URL: presigned URLs are credentials) and the retries
 * `retriesFor` the error (default the policy's).
 */
export async function withRetries<T>(
  describe: string,
  attempt: (attemptIndex: number) => Promise<T>,
  classify: Classifier,
  policy: RetryPolicy,
  logger: Pick<Logger, 'info' | 'debug'>,
  retriesFor: (error: unknown) => number = () => policy.retries,
): Promise<T> {
  const startedAt = policy.now()
  for (let index = 0; ; index++) {
    policy.signal?.throwIfAborted()
    try {
      return await attempt(index)
    } catch (error) {
      if (policy.signal?.aborted) throw policy.signal.reason
      const now = policy.now()
      const decision = decideRetry(classify(error, now), { index, startedAt, now }, policy)
      if (decision.kind === 'fail') throw decision.gaveUp ? afterRetries(error, decision.gaveUp) : error
      const reason = shortReason(error)
      // A part's error names its file already.
      const what = reason.startsWith(`${describe}: `) ? reason : `${describe}: ${reason}`
      logger.info(`${what}; retry ${index + 1} of ${retriesFor(error)} in ${formatSeconds(decision.waitMs)}`)
      await abortable(policy.sleep(decision.waitMs, policy.signal), policy.signal)
    }
  }
}

/** `promise`, or the signal's reason as soon as it is aborted (an injected sleep knows no signal). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise
  if (signal.aborted) return Promise.reject(signal.reason as Error)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error)
    signal.addEventListener('abort', onAbort, { once: true })
    void promise.finally(() => signal.removeEventListener('abort', onAbort)).then(resolve, reject)
  })
}

function shortReason(error: unknown): string {
  const { status, code: serviceCode } = error as { status?: unknown; code?: unknown }
  if (typeof status === 'number' && typeof serviceCode === 'string') return `${status} ${serviceCode}`
  const code = errorCodes(error)[0]
  const message = messageOf(error)
  return code && !message.includes(code) ? `${code} (${message})` : message
}
