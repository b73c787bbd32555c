// What one attempt at a part came to (an Outcome), and the one table that decides what follows it
// (an Action). Retry decisions are values; an error is built once, when the upload gives up.
import { descriptorLimitRemedy } from '../platform.ts'
import { gaveUpNote, type GaveUp } from '../../common/retry.ts'
import { backoffDelay, outOfTime, type RetryPolicy } from '../../common/retry.ts'
import { errorCodes } from '../../common/network.ts'

/** A part that could not be stored: names the file and part, never the URL (a credential). */
export class PartUploadError extends Error {
  override name = 'PartUploadError'
  readonly status: number | undefined
  readonly retryable: boolean
  constructor(message: string, status: number | undefined, retryable: boolean, options?: ErrorOptions) {
    super(message, options)
    this.status = status
    this.retryable = retryable
  }
}

/** A refusal that may pass: what the store or the network said, made an error only if the upload gives up. */
export interface Failure {
  /** What failed and why, after the part's name: `the store answered 500 InternalError`. */
  detail: string
  status: number | undefined
  cause?: unknown
}

export type Outcome =
  | { kind: 'stored' }
  /** A straggler at the upload's end, aborted by the tail rule (see TAIL_STALL_MS): how long it was quiet. */
  | { kind: 'restart'; quiet: string }
  /** The file could not be opened for want of file descriptors (EMFILE, ENFILE): no failure of the part. */
  | { kind: 'out-of-descriptors'; code: 'EMFILE' | 'ENFILE'; cause: unknown }
  /** A refusal that may mean the store is overloaded (503 SlowDown, 429, a connection lost): `signal` names it. */
  | { kind: 'overload'; signal: string; failure: Failure }
  | { kind: 'retryable'; failure: Failure }
  | { kind: 'fatal'; error: Error }

/** A part's attempts so far, as the table needs them. */
export interface AttemptState {
  /** The part's name for the log and its errors (describePart). */
  describe: string
  /** Retries after a failure so far: neither a straggler's restart nor a wait for descriptors counts. */
  retries: number
  /** Waits for file descriptors in a row with no part stored in between (one stored gives some back). */
  descriptorWaits: number
  /** The upload's parts stored when this part last waited for descriptors. */
  storedAtDescriptorWait: number
  /** Other PUTs were stored during the last attempt: the store is up, the refusal this part's bad luck. */
  storedMeanwhile: boolean
  /** When the part's first attempt started, and now (RetryPolicy.now). */
  firstAttemptAt: number
  now: number
  /** PUTs allowed at a time now. */
  concurrency: number
}

export type Action =
  | { kind: 'done' }
  /** Send again at once, without a retry's wait; `note` is the log line. */
  | { kind: 'send-again'; note: string }
  /** Wait, then retry; `overload` (when set) is the refusal the adaptive limit is told of. */
  | { kind: 'retry'; waitMs: number; note: string; overload: string | undefined }
  /** Fewer uploads at a time, then wait for some to end and try again (no retry of its own). */
  | { kind: 'fewer'; waitMs: number; code: 'EMFILE' | 'ENFILE' }
  /** The upload stops: this part failed for good. */
  | { kind: 'stop'; error: Error }

/**
 * Waits after EMFILE / ENFILE before the part opens its file again: 50 ms, doubling, at most 2 s. The
 * part gives up only after this many in a row with no part of the upload stored meanwhile (about 11 s
 * in which no descriptor came back): while the upload moves, a full table is waited out.
 */
export const DESCRIPTOR_WAITS = 10
const descriptorWait = (wait: number) => Math.min(2_000, 50 * 2 ** wait)

/** The decision table: what to do after an attempt came to `outcome`. */
export function decide(outcome: Outcome, state: AttemptState, policy: RetryPolicy): Action {
  switch (outcome.kind) {
    case 'stored':
      return { kind: 'done' }
    case 'restart':
      return {
        kind: 'send-again',
        note: `${state.describe}: ${outcome.quiet}, while every other part has started: sent again`,
      }
    case 'out-of-descriptors':
      if (state.descriptorWaits < DESCRIPTOR_WAITS) {
        return { kind: 'fewer', waitMs: descriptorWait(state.descriptorWaits), code: outcome.code }
      }
      return {
        kind: 'stop',
        error: new PartUploadError(
          `${state.describe}: out of file descriptors (${outcome.code}), even with ${state.concurrency} ` +
            `upload${state.concurrency === 1 ? '' : 's'} at a time and none ending for ${DESCRIPTOR_WAITS} waits: ` +
            descriptorLimitRemedy(),
          undefined,
          false,
          { cause: outcome.cause },
        ),
      }
    case 'overload':
      return retryOrStop(outcome.failure, state, policy, outcome.signal)
    case 'retryable':
      return retryOrStop(outcome.failure, state, policy, undefined)
    case 'fatal':
      return { kind: 'stop', error: outcome.error }
  }
}

/**
 * A retry after a backoff, unless the retries are spent or the next would start past maxElapsedMs.
 * A part refused while the store stored other PUTs waits a first retry's wait: only a refusal with
 * nothing stored meanwhile (a store down) waits as its failures so far make it; the load is the
 * adaptive concurrency's to shed.
 */
function retryOrStop(
  failure: Failure,
  state: AttemptState,
  policy: RetryPolicy,
  overload: string | undefined,
): Action {
  const attempts = state.retries + 1
  const giveUp = (gaveUp: GaveUp | undefined): Action => ({
    kind: 'stop',
    error: new PartUploadError(
      `${state.describe}: ${failure.detail}${gaveUpNote(gaveUp)}`,
      failure.status,
      true,
      { cause: failure.cause },
    ),
  })
  if (state.retries >= policy.retries)
    return giveUp(attempts > 1 ? { kind: 'retries-spent', attempts } : undefined)
  const waitMs = backoffDelay(state.storedMeanwhile ? 0 : state.retries, policy)
  const late = outOfTime(attempts, state.now - state.firstAttemptAt, waitMs, policy)
  if (late) return giveUp(late)
  const code = errorCodes(failure.cause)[0]
  const reason = code ? `${code} (${failure.detail})` : failure.detail
  const note = `${state.describe}: ${reason}; retry ${attempts} of ${policy.retries} in ${(waitMs / 1000).toFixed(1)} s`
  return { kind: 'retry', waitMs, note, overload }
}
