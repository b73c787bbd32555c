// What one attempt at a part came to (an Outcome), and the one table that decides what follows it
// (an Action). Retry decisions are values; an error is built once, when the upload gives up.
import { descriptorLimitRemedy } from '../platform.ts'
import { backoffDelay, gaveUpNote, outOfTime, type GaveUp, type RetryPolicy } from '../../common/retry.ts'
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

/** Made an error only if the upload gives up. */
export interface Failure {
  /** `the store answered 500 InternalError`. */
  detail: string
  status: number | undefined
  cause?: unknown
}

export type Outcome =
  | { kind: 'stored' }
  | { kind: 'restart'; quiet: string }
  | { kind: 'out-of-descriptors'; code: 'EMFILE' | 'ENFILE'; cause: unknown }
  /** 503 SlowDown, 429, a connection lost: `signal` names it. */
  | { kind: 'overload'; signal: string; failure: Failure }
  | { kind: 'retryable'; failure: Failure }
  | { kind: 'fatal'; error: Error }

export interface AttemptState {
  describe: string
  /** Neither a straggler's restart nor a wait for descriptors counts. */
  retries: number
  /** In a row with no part stored in between. */
  descriptorWaits: number
  storedAtDescriptorWait: number
  /** The store is up: the refusal is this part's bad luck. */
  storedMeanwhile: boolean
  firstAttemptAt: number
  now: number
  concurrency: number
}

export type Action =
  | { kind: 'done' }
  | { kind: 'send-again'; note: string }
  /** `overload`: the refusal the adaptive limit is told of. */
  | { kind: 'retry'; waitMs: number; note: string; overload: string | undefined }
  | { kind: 'fewer'; waitMs: number; code: 'EMFILE' | 'ENFILE' }
  | { kind: 'stop'; error: Error }

/** Waits after EMFILE / ENFILE in a row with nothing stored meanwhile: while the upload moves, a full table is waited out. */
export const DESCRIPTOR_WAITS = 10
const descriptorWait = (wait: number) => Math.min(2_000, 50 * 2 ** wait)

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
    case 'retryable':
      return retryOrStop(outcome, state, policy)
    case 'fatal':
      return { kind: 'stop', error: outcome.error }
  }
}

/** A part refused while others were stored waits a first retry's wait: the load is the adaptive limit's to shed. */
function retryOrStop(
  outcome: Extract<Outcome, { failure: Failure }>,
  state: AttemptState,
  policy: RetryPolicy,
): Action {
  const { failure } = outcome
  const overload = outcome.kind === 'overload' ? outcome.signal : undefined
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
