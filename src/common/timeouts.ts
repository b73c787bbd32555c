// Every time limit of a run: those derived once from `request-timeout` (the API client and the
// upload's PUTs read them from here, so changing what the input means is one edit), the bounds of the
// inputs that set one, and the fixed ones (GitHub's calls, an operation's deadline, the smoke test's
// page load, git's answer to the CLI).

/** What durations are measured on: Date.now, or a test's virtual time. */
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
 * How long a publish may take to be served at its URL. The CDN's router polls its configuration
 * every 2.5 s, but only after a queued worker has rebuilt it, and that queue is shared: minutes, not
 * seconds, is what a busy service can take. Five minutes covers it, and still ends a run whose build
 * is never served well within a CI job's time.
 */
export const DEFAULT_VERIFY_TIMEOUT_SECONDS = 300
export const MAX_VERIFY_TIMEOUT_SECONDS = 3600
/** How long the smoke test watches a page after its load event: a game's start-up, not its play. */
export const DEFAULT_SMOKE_TEST_SECONDS = 3
export const MAX_SMOKE_TEST_SECONDS = 120
/** How long the page may take to load: the seen-live bound, since the host already served it. */
export const PAGE_LOAD_TIMEOUT_MS = 60_000

/**
 * An operation's deadline unless GAMEHOST_DEADLINE_SECONDS says otherwise: ten minutes, more than one
 * call can take at the default limits (retries stop 3 min after its first attempt, and the last
 * attempt may take the 3 min of an API call's deadline), less than a job waits for a listing.
 */
export const OPERATION_DEADLINE_MS = 10 * 60_000

/** A GitHub call not told otherwise: a hung call never holds the run. */
export const GITHUB_CALL_TIMEOUT_MS = 30_000
/**
 * The sticky comment never fails a deploy: each of its calls is abandoned after this, and tried again
 * after a first delay (doubled for each next one) within one budget for all of them.
 */
export const COMMENT_CALL_TIMEOUT_MS = 15_000
export const COMMENT_RETRY_DELAY_MS = 1_000
export const COMMENT_BUDGET_MS = 60_000
/** GitHub kills a cancelled step 7.5 s after SIGINT: the comment may take 4 s of it. */
export const CANCELLED_COMMENT_MS = 4_000
/** How long git may take to name the CLI's repository, commit and branch. */
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
  /** A PUT's deadline in all, progress or not: four stall limits, and one more per 256 KiB it carries. */
  putDeadlineMs(length: number): number
}

/** `serviceLimitMs`: what an API call waits at the least (a test gives a small one). */
export function timeoutsFor(requestTimeoutMs: number, serviceLimitMs = SERVICE_REQUEST_LIMIT_MS): Timeouts {
  const apiStallMs = Math.max(requestTimeoutMs, serviceLimitMs)
  return {
    stallMs: requestTimeoutMs,
    apiStallMs,
    apiDeadlineMs: apiStallMs + Math.ceil(apiStallMs / 10),
    putDeadlineMs: (length) => Math.ceil(requestTimeoutMs * (4 + length / PUT_BUFFER)),
  }
}
