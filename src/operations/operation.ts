// One operation of the service as every front end runs it: the GitHub action of its folder through
// action.ts, and the CLI subcommand of the same name. It reads its inputs, calls the service within a
// Run (cancelled by the front end's signals, bounded by a deadline), and says its outputs and report.

import { UsageError, errorMessage } from '../api/errors.ts'
import type { RetryPolicy } from '../common/retry.ts'
import type { Dispatcher } from 'undici'
import type { Connection, GetInput, ReadOptions } from '../inputs/common.ts'
import type { Logger } from '../common/logger.ts'
import type { OutputValue, Report } from '../common/report.ts'
import { openRun, type Run } from '../api/run.ts'
import { OPERATION_DEADLINE_MS, type Clock, type Timer } from '../common/timeouts.ts'
import { explainServiceFailure } from '../inputs/service-hints.ts'

export const DEADLINE_ENV = 'GAMEHOST_DEADLINE_SECONDS'

/** What was done so far, in words, for the message of a run stopped before its end. */
export type Journal = string[]

export interface Operation<I extends Connection, R> {
  /** The action's folder and the CLI's subcommand. */
  name: string
  /** Reads and checks every input; throws UsageError. */
  read(get: GetInput, options?: ReadOptions): I
  /** Calls the service through the run's client; notes each step done in `journal`. */
  run(inputs: I, run: Run, journal: Journal): Promise<R>
  /** What a run stopped midway has changed at the service, beyond its journal. Default: it only reads. */
  stoppedNote?: string
  /** Every output, by its name in action.yml. */
  outputs(result: R): Record<string, OutputValue>
  /** The job summary in the action, the text the CLI prints. */
  report(result: R, inputs: I): Report
  /**
   * Why the step fails although every call succeeded (a crashed lobby, a config the service finds
   * invalid): thrown after the outputs are set and the report written.
   */
  failure?(result: R, inputs: I): Error | undefined
}

export interface RunOperationOptions {
  logger: Logger
  /** The front end's SIGINT / SIGTERM. */
  signal?: AbortSignal
  deadlineMs?: number
  /** Default: a keep-alive pool of this run, closed at its end. */
  dispatcher?: Dispatcher
  retry?: Partial<RetryPolicy>
  clock?: Clock
  timer?: Timer
}

/** A run stopped before its end by a cancellation or its deadline (`cause`): says what was done before. */
export class OperationStoppedError extends Error {
  override name = 'OperationStoppedError'
  readonly journal: readonly string[]
  constructor(operation: string, cause: unknown, journal: readonly string[], note: string) {
    const reason = errorMessage(cause)
    const done = journal.length
      ? `stopped after: ${journal.join('; ')}`
      : 'stopped before any call was answered'
    super(`${reason}: ${operation} ${done}. ${note}`, { cause })
    this.journal = journal
  }
}

/** A cancelled or overdue run says what it did. */
export async function runOperation<I extends Connection, R>(
  operation: Operation<I, R>,
  inputs: I,
  options: RunOperationOptions,
): Promise<R> {
  const run = openRun({
    ...options,
    connection: inputs,
    deadlineMs: options.deadlineMs ?? OPERATION_DEADLINE_MS,
    name: `${operation.name} run`,
    explain: explainServiceFailure,
  })
  const journal: Journal = []
  try {
    return await operation.run(inputs, run, journal)
  } catch (error) {
    if (!run.signal.aborted) throw error
    throw new OperationStoppedError(
      operation.name,
      run.signal.reason,
      journal,
      operation.stoppedNote ?? 'It only reads: nothing was changed.',
    )
  } finally {
    await run.dispose()
  }
}

/** The deadline GAMEHOST_DEADLINE_SECONDS sets, in ms. */
export function deadlineFromEnv(env: Readonly<Record<string, string | undefined>>): number | undefined {
  const raw = env[DEADLINE_ENV]?.trim()
  if (!raw) return undefined
  const seconds = Number(raw)
  if (!/^\d+(\.\d+)?$/.test(raw) || !(seconds > 0))
    throw new UsageError(`${DEADLINE_ENV} '${raw}' is not a number of seconds above 0`)
  return Math.round(seconds * 1000)
}
