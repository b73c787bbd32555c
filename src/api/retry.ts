import { setTimeout as delay } from 'node:timers/promises'
import { ServiceError } from './errors.ts'
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
 * Runs `attempt` until it succeeds, `shouldRetry` says no, or the retries are spent. Logs each retry
 * with `describe` (never a URL: presigned URLs are credentials).
 */
export async function withRetries<T>(
  describe: string,
  attempt: (attemptIndex: number) => Promise<T>,
  shouldRetry: (error: unknown) => boolean,
  policy: RetryPolicy,
  logger: Pick<Logger, 'info' | 'debug'>,
  hooks: RetryHooks = {},
): Promise<T> {
  const started = policy.now()
  for (let index = 0; ; index++) {
    policy.signal?.throwIfAborted()
    try {
      return await attempt(index)
    } catch (error) {
      if (policy.signal?.aborted) throw policy.signal.reason
      if (!shouldRetry(error)) throw error
      if (index >= policy.retries) {
        if (error instanceof Error && index > 0) error.message += ` (gave up after ${index + 1} attempts)`
        throw error
      }
      const now = policy.now()
      const asked = requestedDelay(error, now)
      if (asked !== undefined && asked > policy.maxRetryAfterMs) {
        if (error instanceof Error) {
          error.message +=
            ` (the service asks to wait ${Math.ceil(asked / 1000)} s, until ${new Date(now + asked).toISOString()}: ` +
            `longer than the ${Math.round(policy.maxRetryAfterMs / 1000)} s allowed; not retried)`
        }
        throw error
      }
      const wait =
        asked === undefined
          ? backoffDelay(hooks.backoffStep?.(index, error) ?? index, policy)
          : asked + policy.random() * 250
      if (now + wait - started > policy.maxElapsedMs) {
        if (error instanceof Error) {
          error.message +=
            ` (gave up after ${index + 1} attempts in ${Math.round((now - started) / 1000)} s: ` +
            `retries stop ${Math.round(policy.maxElapsedMs / 1000)} s after the first attempt)`
        }
        throw error
      }
      hooks.onRetry?.(error)
      logger.info(
        `${withSubject(describe, shortReason(error))}; retry ${index + 1} of ${hooks.retriesFor?.(error) ?? policy.retries} in ${(wait / 1000).toFixed(1)} s`,
      )
      await abortable(policy.sleep(wait, policy.signal), policy.signal)
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
