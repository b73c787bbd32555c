// One operation of the service, run alike by its GitHub action (action.ts) and its CLI subcommand.

import { UsageError, errorMessage } from '../api/errors.ts'
import type { RetryPolicy } from '../common/retry.ts'
import type { Dispatcher } from 'undici'
import type { Connection, GetInput, ReadOptions } from '../inputs/common.ts'
import type { Logger } from '../common/logger.ts'
import type { OutputValue, Report } from '../common/report.ts'
import { openRun, type Run } from '../api/run.ts'
import { OPERATION_DEADLINE_MS, type Clock, type Timer } from '../common/timeouts.ts'
import { explainServiceFailure } from '../inputs/service-hints.ts'

const DEADLINE_ENV = 'GAMEHOST_DEADLINE_SECONDS'

/** What was done so far, in words, for the message of a run stopped before its end. */
export type Journal = string[]

export interface Operation<I extends Connection, R> {
  /** The action's folder and the CLI's subcommand. */
  name: string
  read(get: GetInput, options?: ReadOptions): I
  run(inputs: I, run: Run, journal: Journal): Promise<R>
  /** What a run stopped midway has changed at the service, beyond its journal. Default: it only reads. */
  stoppedNote?: string
  outputs(result: R): Record<string, OutputValue>
  report(result: R, inputs: I): Report
  /** Why the step fails although every call succeeded (a crashed lobby): thrown after outputs and report. */
  failure?(result: R, inputs: I): Error | undefined
}

interface RunOperationOptions {
  logger: Logger
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
  constructor(operation: string, cause: unknown, journal: readonly string[], note: string) {
    const done = journal.length
      ? `stopped after: ${journal.join('; ')}`
      : 'stopped before any call was answered'
    super(`${errorMessage(cause)}: ${operation} ${done}. ${note}`, { cause })
  }
}

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

export function deadlineFromEnv(env: Readonly<Record<string, string | undefined>>): number | undefined {
  const raw = env[DEADLINE_ENV]?.trim()
  if (!raw) return undefined
  const seconds = Number(raw)
  if (!/^\d+(\.\d+)?$/.test(raw) || !(seconds > 0))
    throw new UsageError(`${DEADLINE_ENV} '${raw}' is not a number of seconds above 0`)
  return Math.round(seconds * 1000)
}
