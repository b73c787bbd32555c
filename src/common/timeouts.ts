// Every time limit of a run, derived once from `request-timeout`: the API client, the upload's PUTs,
// its stall sweep and its drain all read them from here, so changing what the input means is one edit.

/** What durations are measured on: Date.now, or a test's virtual time. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 30

/** The service gives up on a request after 50 s (500 API_REQUEST_TIMEOUT): an API call waits a little longer. */
export const SERVICE_REQUEST_LIMIT_MS = 60_000
/** A PUT's deadline grows by one stall limit per this many bytes it carries. */
const PUT_BUFFER = 256 * 1024

export interface Timeouts {
  /** A PUT with no byte sent or received for this long is aborted and retried: `request-timeout`. */
  readonly stallMs: number
  /** The same for an API call: never shorter than the service's own limit, so its answer arrives. */
  readonly apiStallMs: number
  /** An API call's deadline in all, progress or not: apiStallMs and a tenth more. */
  readonly apiDeadlineMs: number
  /** How often the PUTs in flight are checked against their limits. */
  readonly sweepMs: number
  /** How long a failed or cancelled upload waits for its parts' tasks to end. */
  readonly drainMs: number
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
    sweepMs: Math.max(5, Math.min(250, Math.floor(requestTimeoutMs / 4))),
    drainMs: requestTimeoutMs,
    putDeadlineMs: (length) => Math.ceil(requestTimeoutMs * (4 + length / PUT_BUFFER)),
  }
}
