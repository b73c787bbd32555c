// Everything the CLI prints goes through `write`: the result on stdout, the log and errors on stderr.

import {
  NetworkError,
  ServiceError,
  ServiceStateError,
  UsageError,
  ValidationFailedError,
  errorMessage,
} from '../api/errors.ts'
import { validationTitle } from '../api/rules.ts'
import { isCancelled } from '../common/cancel.ts'
import { renderText, type OutputValue, type Report } from '../common/report.ts'
import { inertJson } from '../common/untrusted.ts'
import { OperationStoppedError } from '../operations/operation.ts'
import type { TerminalLogger, TerminalStream } from './terminal.ts'

export function write(channel: 'stdout' | 'stderr', text: string): void {
  process[channel].write(text)
}

export const stderrStream: TerminalStream = {
  write: (text: string) => write('stderr', text),
  get isTTY() {
    return process.stderr.isTTY
  },
  get columns() {
    return process.stderr.columns
  },
}

export const EXIT_OK = 0
export const EXIT_FAILURE = 1
export const EXIT_USAGE = 2
/** What a shell reports for a program ended by Ctrl-C (128 + SIGINT). */
export const EXIT_CANCELLED = 130

export function exitCodeOf(error: unknown): number {
  const cause = error instanceof OperationStoppedError ? error.cause : error
  if (isCancelled(cause)) return EXIT_CANCELLED
  if (cause instanceof UsageError && !(cause instanceof ServiceStateError)) return EXIT_USAGE
  return EXIT_FAILURE
}

/** The error's code in a --json document: the service's own code when it answered one. */
function errorCode(error: unknown): string {
  const cause = error instanceof OperationStoppedError ? error.cause : error
  if (cause instanceof ServiceError) return cause.code
  if (isCancelled(cause)) return 'CANCELLED'
  if (cause instanceof ServiceStateError) return 'SERVICE_STATE'
  if (cause instanceof UsageError) return 'USAGE'
  if (cause instanceof ValidationFailedError) return 'VALIDATION_FAILED'
  if (cause instanceof NetworkError) return 'NETWORK'
  return 'FAILED'
}

export function print(
  io: { logger: TerminalLogger; json: boolean },
  outputs: Record<string, OutputValue>,
  report: Report | undefined,
  failure?: unknown,
): void {
  io.logger.close()
  if (io.json) printJson(outputs, failure)
  else if (report) write('stdout', '\n' + renderText(report))
}

/** The --json document: the outputs known and, on a failure, the error's code and message beside them. */
export function printJson(outputs: Record<string, OutputValue>, failure?: unknown): void {
  const error =
    failure === undefined ? {} : { error: { code: errorCode(failure), message: errorMessage(failure) } }
  write('stdout', inertJson({ ...outputs, ...error }, 2) + '\n')
}

export function reportError(logger: TerminalLogger, error: unknown): void {
  if (error instanceof ValidationFailedError) {
    for (const problem of error.problems)
      logger.error(problem.description, { title: problem.title ?? validationTitle(problem.path) })
  }
  logger.error(errorMessage(error))
}
