import { setTimeout as delay } from 'node:timers/promises'
import { afterRetries, ServiceError, type GaveUp } from './errors.ts'
import type { Logger } from '../common/logger.ts'

/** How and when to try again. Clock, sleep and randomness are injectable so tests take milliseconds. */
export interface RetryPolicy {
  /** Attempts after the first. */
  retries: number
  baseDelayMs: number
  maxDelayMs: number
  /** The longest `retry-after` waited; a call asked to wait longer fails at once, saying when. */
  maxRetryAfterMs: number
  /**
   * No retry starts that would begin later than this after the first attempt: a service that stays
   * down fails in a few minutes however many retries are allowed.
   */
  maxElapsedMs: number
  /** Waits `ms`; the default ends at once with `signal` (the policy's own when none is given). */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>
  random: () => number
  now: () => number
  /** Cancels the run: no attempt starts once aborted, and a wait ends at once, rejecting with the reason. */
  signal?: AbortSignal
}

// Eight retries with backoff capped at 30 s wait at least 45 s in all: a half-minute outage is survived.
export const DEFAULT_RETRIES = 8
export const DEFAULT_MAX_RETRY_AFTER_SECONDS = 120
export const DEFAULT_MAX_ELAPSED_MS = 180_000

export function retryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy: RetryPolicy = {
    retries: DEFAULT_RETRIES,
    baseDelayMs: 500,
    maxDelayMs: 30_000,
    maxRetryAfterMs: DEFAULT_MAX_RETRY_AFTER_SECONDS * 1000,
    maxElapsedMs: DEFAULT_MAX_ELAPSED_MS,
    sleep: (ms) => delay(ms),
    random: Math.random,
    now: Date.now,
    ...overrides,
  }
  // The real sleep ends with the signal, so no timer outlives a cancelled run.
  if (!overrides.sleep)
    policy.sleep = (ms, signal) => delay(ms, undefined, { signal: signal ?? policy.signal })
  return policy
}

/** Exponential backoff with jitter: between half and all of base * 2^attempt, capped. */
export function backoffDelay(attempt: number, policy: RetryPolicy): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt)
  return Math.round(ceiling / 2 + (policy.random() * ceiling) / 2)
}

/**
 * The wait a 429 (or 503) asks for: the `retry-after` header (seconds or an HTTP date) or the
 * service's `metadata` retry time (ms since the epoch), whichever is later.
 */
export function requestedDelay(error: unknown, now: number): number | undefined {
  if (!(error instanceof ServiceError)) return undefined
  const candidates: number[] = []
  const header = error.retryAfter?.trim()
  if (header) {
    if (/^\d+(\.\d+)?$/.test(header)) candidates.push(Number(header) * 1000)
    else {
      const at = Date.parse(header)
      if (!Number.isNaN(at)) candidates.push(at - now)
    }
  }
  if (typeof error.metadata === 'number' && Number.isFinite(error.metadata))
    candidates.push(error.metadata - now)
  if (candidates.length === 0) return undefined
  return Math.max(0, ...candidates)
}

const CONNECTION_NOT_ESTABLISHED = new Set([
  'ECONNREFUSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
])
/** The code of a request aborted past its overall deadline (client.ts's DeadlineError). */
export const DEADLINE_EXCEEDED = 'GAMEHOST_DEADLINE_EXCEEDED'

const CONNECTION_LOST = new Set([
  DEADLINE_EXCEEDED,
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH',
  'UND_ERR_ABORTED',
])

/** The `code`s of an error and its causes, outermost first (undici's error codes sit in the cause). */
export function errorCodes(error: unknown): string[] {
  const codes: string[] = []
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as Error).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string') codes.push(code)
  }
  return codes
}

/** A connection that failed before the request was sent: safe to retry any call. */
export function isConnectFailure(error: unknown): boolean {
  return errorCodes(error).some((c) => CONNECTION_NOT_ESTABLISHED.has(c))
}

/** Any network-level failure (refused, reset, closed mid-body, timed out). */
export function isNetworkFailure(error: unknown): boolean {
  return errorCodes(error).some((c) => CONNECTION_NOT_ESTABLISHED.has(c) || CONNECTION_LOST.has(c))
}

export interface RetryHooks {
  /** Called with the error before each retry's wait. */
  onRetry?: (error: unknown) => void
  /**
   * The backoff's exponent for the wait after the failed attempt `index` (default `index`: each
   * failure doubles the wait).
   */
  backoffStep?: (index: number, error: unknown) => number
  /** The retries `error` may have in all, for the log line (default the policy's). */
  retriesFor?: (error: unknown) => number
}

/**
 * What the caller's `shouldRetry` says of a failure: retry it (true), fail with it as it is (false),
 * or fail saying how its retries stopped (a GaveUp).
 */
export type RetryVerdict = boolean | GaveUp

/** Where a retried call stands after a failed attempt. */
export interface RetryState {
  /** The failed attempt's index: 0 for the first. */
  index: number
  /** When the first attempt started, and now (RetryPolicy.now). */
  startedAt: number
  now: number
}

/**
 * What follows a failed attempt: a retry after `waitMs`, or failing with the error, as it is or (with
 * `gaveUp`) made again saying how its retries stopped.
 */
export type RetryDecision = { kind: 'fail'; gaveUp: GaveUp | undefined } | { kind: 'retry'; waitMs: number }

/**
 * The decision after a failed attempt: a retry after its wait, unless the caller says no, the retries
 * are spent, the service asks for a wait longer than allowed, or the retry would start past maxElapsedMs.
 */
export function decideRetry(
  error: unknown,
  verdict: RetryVerdict,
  state: RetryState,
  policy: RetryPolicy,
  backoffStep: (index: number, error: unknown) => number = (index) => index,
): RetryDecision {
  if (verdict !== true) return { kind: 'fail', gaveUp: verdict === false ? undefined : verdict }
  const attempts = state.index + 1
  if (state.index >= policy.retries) {
    return { kind: 'fail', gaveUp: attempts > 1 ? { kind: 'retries-spent', attempts } : undefined }
  }
  const asked = requestedDelay(error, state.now)
  if (asked !== undefined && asked > policy.maxRetryAfterMs) {
    const until = state.now + asked
    return {
      kind: 'fail',
      gaveUp: { kind: 'wait-too-long', askedMs: asked, until, maxRetryAfterMs: policy.maxRetryAfterMs },
    }
  }
  const waitMs =
    asked === undefined
      ? backoffDelay(backoffStep(state.index, error), policy)
      : asked + policy.random() * 250
  const late = outOfTime(attempts, state.now - state.startedAt, waitMs, policy)
  return late ? { kind: 'fail', gaveUp: late } : { kind: 'retry', waitMs }
}

/** A retry that would wait `waitMs` after `elapsedMs` starts past maxElapsedMs: the GaveUp that says so. */
export function outOfTime(
  attempts: number,
  elapsedMs: number,
  waitMs: number,
  policy: RetryPolicy,
): GaveUp | undefined {
  if (elapsedMs + waitMs <= policy.maxElapsedMs) return undefined
  return { kind: 'out-of-time', attempts, elapsedMs, maxElapsedMs: policy.maxElapsedMs }
}

/**
 * Runs `attempt` until it succeeds or decideRetry says to fail. Logs each retry with `describe` (never
 * a URL: presigned URLs are credentials). A failure after retries is the last error made again with
 * how they stopped (afterRetries): no error's message is changed once thrown.
 */
export async function withRetries<T>(
  describe: string,
  attempt: (attemptIndex: number) => Promise<T>,
  shouldRetry: (error: unknown) => RetryVerdict,
  policy: RetryPolicy,
  logger: Pick<Logger, 'info' | 'debug'>,
  hooks: RetryHooks = {},
): Promise<T> {
  const startedAt = policy.now()
  for (let index = 0; ; index++) {
    policy.signal?.throwIfAborted()
    try {
      return await attempt(index)
    } catch (error) {
      if (policy.signal?.aborted) throw policy.signal.reason
      const verdict = shouldRetry(error)
      const state = { index, startedAt, now: policy.now() }
      const decision = decideRetry(error, verdict, state, policy, hooks.backoffStep)
      if (decision.kind === 'fail') throw decision.gaveUp ? afterRetries(error, decision.gaveUp) : error
      hooks.onRetry?.(error)
      logger.info(
        `${withSubject(describe, shortReason(error))}; retry ${index + 1} of ${hooks.retriesFor?.(error) ?? policy.retries} in ${(decision.waitMs / 1000).toFixed(1)} s`,
      )
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

/** `what: reason`, unless the reason already names what failed (a part's error names its file). */
function withSubject(describe: string, reason: string): string {
  return reason.startsWith(`${describe}: `) ? reason : `${describe}: ${reason}`
}

function shortReason(error: unknown): string {
  if (error instanceof ServiceError) return `${error.status} ${error.code}`
  const code = errorCodes(error)[0]
  const message = error instanceof Error ? error.message : String(error)
  return code ? `${code} (${message})` : message
}
