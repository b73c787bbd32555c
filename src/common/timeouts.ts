// Every time limit of a run: those derived from `request-timeout` (so changing what the input means is
// one edit), the bounds of the inputs that set one, and the fixed ones.

export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** Calls `callback` after `ms` (on the clock it goes with); answers what cancels it. */
export interface Timer {
  after(ms: number, callback: () => void): () => void
}

export const systemTimer: Timer = {
  after(ms, callback) {
    const timeout = setTimeout(callback, ms)
    return () => clearTimeout(timeout)
  },
}

export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 30
export const MAX_REQUEST_TIMEOUT_SECONDS = 3600
export const MAX_RETRY_AFTER_SECONDS = 3600
/**
 * The CDN's router polls its configuration every 2.5 s, but only after a shared queue's worker has
 * rebuilt it: a busy service takes minutes. Five cover it, well within a CI job's time.
 */
export const DEFAULT_VERIFY_TIMEOUT_SECONDS = 300
export const MAX_VERIFY_TIMEOUT_SECONDS = 3600
/** How long the smoke test watches a page after its load event: a game's start-up, not its play. */
export const DEFAULT_SMOKE_TEST_SECONDS = 3
export const MAX_SMOKE_TEST_SECONDS = 120
/** How long the page may take to load: the seen-live bound, since the host already served it. */
export const PAGE_LOAD_TIMEOUT_MS = 60_000
/** A smoke test's browser call, or its silence while a page is watched: a busy runner answers within 1 s. */
export const BROWSER_ANSWER_MS = 5_000
/** The bound of any one call to the browser the driver makes (puppeteer's protocolTimeout). */
export const BROWSER_CALL_TIMEOUT_MS = 30_000
/** How long the browser is given to close before its processes are killed, and then to be gone. */
export const BROWSER_CLOSE_MS = 3_000
/** The browser's answer to --version. */
export const BROWSER_VERSION_TIMEOUT_MS = 5_000

/**
 * Unless GAMEHOST_DEADLINE_SECONDS says otherwise: more than one call can take at the default limits
 * (retries stop after 3 min, and the last attempt may take 3 min more), less than a job waits.
 */
export const OPERATION_DEADLINE_MS = 10 * 60_000

/** A GitHub call not told otherwise: a hung call never holds the run. */
export const GITHUB_CALL_TIMEOUT_MS = 30_000
/** The sticky comment never fails a deploy: a call is abandoned after this, retried within a budget. */
export const COMMENT_CALL_TIMEOUT_MS = 15_000
export const COMMENT_RETRY_DELAY_MS = 1_000
export const COMMENT_BUDGET_MS = 60_000
/**
 * A preview deploy's sweep starts no retirement after this, and is cut off as long again after it: a
 * retirement takes seconds, so a minute retires a dozen or so; the next sweep retires the rest.
 */
export const PREVIEW_SWEEP_BUDGET_MS = 60_000
/** GitHub kills a cancelled step 7.5 s after SIGINT: the comment may take 4 s of it. */
export const CANCELLED_COMMENT_MS = 4_000
/** reuse-reviewed's reading of the namespaces' records: a slower host is left out, said so. */
export const REVIEWED_SEARCH_MS = 15_000
export const GIT_TIMEOUT_MS = 5_000

/** The service gives up on a request after 50 s (500 API_REQUEST_TIMEOUT): an API call waits a little longer. */
export const SERVICE_REQUEST_LIMIT_MS = 60_000
/** A PUT's deadline grows by one stall limit per this many bytes it carries. */
const PUT_BUFFER = 256 * 1024

export interface Timeouts {
  /** A request with no answer, or no progress of its answer, for this long is aborted and retried: `request-timeout`. */
  readonly stallMs: number
  /** The same for an API call: never shorter than the service's own limit, so its answer arrives. */
  readonly apiStallMs: number
  /** An API call's deadline in all, progress or not: apiStallMs and a tenth more. */
  readonly apiDeadlineMs: number
  /** A PUT's deadline in all, progress or not: four stall limits, and one more per 256 KiB it carries, in whole seconds. */
  putDeadlineMs(length: number): number
}

/** `serviceLimitMs`: what an API call waits at the least (a test gives a small one). */
export function timeoutsFor(requestTimeoutMs: number, serviceLimitMs = SERVICE_REQUEST_LIMIT_MS): Timeouts {
  const apiStallMs = Math.max(requestTimeoutMs, serviceLimitMs)
  return {
    stallMs: requestTimeoutMs,
    apiStallMs,
    apiDeadlineMs: apiStallMs + Math.ceil(apiStallMs / 10),
    // In whole seconds: PUTs of one duration share one of Node's timer lists, and a list a size costs.
    putDeadlineMs: (length) => Math.ceil((requestTimeoutMs * (4 + length / PUT_BUFFER)) / 1000) * 1000,
  }
}

export class TimeLimitError extends Error {
  override name = 'TimeLimitError'
}

/** The call's answer, or a TimeLimitError naming it once ms have passed without one. */
export async function within<T>(call: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeLimitError(`${what} did not answer within ${ms / 1000} s`)), ms)
  })
  try {
    return await Promise.race([call, late])
  } finally {
    clearTimeout(timer)
  }
}
