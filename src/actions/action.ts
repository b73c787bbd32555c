// What every action shares: the logger, the one place a step fails, the job summary, the outputs.

import { existsSync } from 'node:fs'
import path from 'node:path'
import * as core from '@actions/core'
import { UsageError, ValidationFailedError, errorMessage } from '../api/errors.ts'
import { validationTitle } from '../api/rules.ts'
import type { Connection } from '../inputs/common.ts'
import { registerSecrets } from '../inputs/register-secrets.ts'
import { inputWarnings } from '../inputs/api-url.ts'
import { masked, redact, redactWrites } from '../common/secrets.ts'
import { secretInputs, type ActionName } from '../inputs/table.ts'
import type { AnnotationProperties, Logger } from '../common/logger.ts'
import { visible } from '../common/untrusted.ts'
import { plural } from '../common/format.ts'
import { cancelOnSignals, cancelSignals } from '../common/cancel.ts'
import { deadlineFromEnv, runOperation, type Operation } from '../operations/operation.ts'
import {
  cellHtml,
  escapeHtml,
  heading,
  text,
  type OutputValue,
  type Report,
  type ReportBlock,
} from '../common/report.ts'

/**
 * Every text passes visible(), so that none (a fork's file name, an answer, an error) can end its line,
 * start a workflow command (`::add-mask::`) or send an escape sequence: core.info writes its text raw,
 * and core.warning, error, debug and group escape only CR, LF and %.
 */
export const actionsLogger: Logger = {
  info: (message) => core.info(visible(message)),
  warning: (message, annotation) => core.warning(visible(message), inertAnnotation(annotation)),
  error: (message, annotation) => core.error(visible(message), inertAnnotation(annotation)),
  debug: (message) => core.debug(visible(message)),
  group: (name, fn) => core.group(visible(name), fn),
}

/** Logger has no notice. */
export function notice(message: string, annotation?: AnnotationProperties): void {
  core.notice(visible(message), inertAnnotation(annotation))
}

function inertAnnotation(annotation: AnnotationProperties | undefined): AnnotationProperties | undefined {
  if (!annotation) return annotation
  const { title, file } = annotation
  return {
    ...annotation,
    ...(title !== undefined && { title: visible(title) }),
    ...(file !== undefined && { file: visible(file) }),
  }
}

let summaryWritten = false
/** Each job summary repeats them. */
let warnings: string[] = []

/**
 * The secrets registered and masked first, every write redacted from then on; the step failed exactly
 * once, here. A failure the body wrote no summary for (an input refused) gets `failure`'s.
 */
export async function runAction(
  secretInputs: readonly string[],
  body: () => Promise<void>,
  failure: (error: unknown) => Report = (error) => operationFailureReport('action', error),
): Promise<void> {
  summaryWritten = false
  warnings = []
  const get = (name: string) => core.getInput(name)
  try {
    // Masked for the runner too, before anything else is written (redacted, the mask would say nothing).
    for (const secret of registerSecrets(get, secretInputs)) core.setSecret(secret)
    redactWrites(process.stdout)
    redactWrites(process.stderr)
    warnings = inputWarnings(get)
    for (const warning of warnings) actionsLogger.warning(warning, { title: 'Token sent in clear text' })
    await body()
  } catch (error) {
    if (error instanceof ValidationFailedError) {
      for (const problem of error.problems)
        actionsLogger.error(problem.description, { title: problem.title ?? validationTitle(problem.path) })
    }
    if (!summaryWritten) await writeReport(failure(error))
    core.setFailed(visible(errorMessage(error)))
  }
}

function operationFailureReport(action: string, error: unknown): Report {
  const inputWrong = error instanceof UsageError || error instanceof ValidationFailedError
  return {
    title: `gamehost ${action} failed`,
    blocks: [
      text(`Failed: ${errorMessage(error)}`),
      ...(inputWrong
        ? [
            heading('A re-run'),
            text('A re-run with the same inputs fails the same way: fix the input the error names first.'),
          ]
        : []),
    ],
  }
}

export function operationAction<I extends Connection, R>(operation: Operation<I, R>): () => Promise<void> {
  return () =>
    runAction(
      secretInputs(operation.name as ActionName),
      async () => {
        const inputs = operation.read((name) => core.getInput(name))
        const hidden = 'githubToken' in inputs && { githubToken: masked(inputs.githubToken as string) }
        actionsLogger.debug(
          `Inputs: ${JSON.stringify({ ...inputs, token: masked(inputs.token), ...hidden })}`,
        )
        // GitHub cancels with SIGINT, then SIGTERM: either stops the run, which says what it did.
        const cancellation = cancelOnSignals(cancelSignals())
        let result: R
        try {
          result = await runOperation(operation, inputs, {
            logger: actionsLogger,
            signal: cancellation.signal,
            deadlineMs: deadlineFromEnv(process.env),
          })
        } finally {
          cancellation.dispose()
        }
        const report = operation.report(result, inputs)
        const refused = await writeOutputsAndReport(operation.outputs(result), report)
        const failure = operation.failure?.(result, inputs)
        if (failure && refused) actionsLogger.error(refused.message)
        if (failure) throw failure
        if (refused) throw refused
      },
      (error) => operationFailureReport(operation.name, error),
    )
}

/** The steps after this one would read the outputs empty. */
export class OutputFileError extends Error {}

/**
 * Strings as they are, null as empty, anything else as JSON, redacted. Throws one OutputFileError naming
 * GITHUB_OUTPUT and every output it could not hold: node's own error names neither.
 */
export function setOutputs(outputs: Record<string, OutputValue>): void {
  const file = process.env.GITHUB_OUTPUT
  const names = Object.keys(outputs)
  const held = (list: string[]) => `${list.length === 1 ? 'output' : 'outputs'} ${list.join(', ')}`
  if (file && names.length && !existsSync(file)) {
    const missing = existsSync(path.dirname(file))
      ? 'the file does not exist'
      : 'neither the file nor its folder exists'
    throw new OutputFileError(`GITHUB_OUTPUT (${file}) could not hold the ${held(names)}: ${missing}`)
  }
  const refused: string[] = []
  let cause: unknown
  for (const [name, value] of Object.entries(outputs)) {
    try {
      core.setOutput(
        name,
        redact(typeof value === 'string' ? value : value === null ? '' : JSON.stringify(value)),
      )
    } catch (error) {
      refused.push(name)
      cause ??= error
    }
  }
  if (refused.length) {
    throw new OutputFileError(
      `GITHUB_OUTPUT (${file ?? 'not set'}) could not hold the ${held(refused)}: ${errorMessage(cause)}`,
      { cause },
    )
  }
}

/**
 * Refused outputs are said at the top of the report, which still tells what was done (the build may be
 * live); their error is returned, to be thrown once the run's account is complete.
 */
export async function writeOutputsAndReport(
  outputs: Record<string, OutputValue>,
  report: Report,
): Promise<OutputFileError | undefined> {
  let refused: OutputFileError | undefined
  try {
    setOutputs(outputs)
  } catch (error) {
    if (!(error instanceof OutputFileError)) throw error
    refused = error
  }
  const failed = refused && text(`Failed: ${refused.message}. The steps after this one read them empty.`)
  await writeReport(failed ? { ...report, blocks: [failed, ...report.blocks] } : report)
  return refused
}

/**
 * The summary is Markdown: each block is one line of HTML (where Markdown is not read), its text escaped
 * and on one line, so no text can end the block and be read as Markdown.
 */
export async function writeReport(report: Report): Promise<void> {
  summaryWritten = true
  // act, Gitea and older GHES have no job summary: the report is then lost, never the step.
  if (!process.env.GITHUB_STEP_SUMMARY) {
    core.warning('GITHUB_STEP_SUMMARY is not set (act, Gitea or an older GHES?): the job summary is skipped.')
    return
  }
  const { summary } = core
  // What was added to the summary before the report stays before it, redacted as the report is.
  const added = redact(summary.stringify())
  const start = added + blockHtml(heading(report.title), 2)
  const blocks = [...report.blocks, ...warnings.map((warning) => text(`Warning: ${warning}`))]
  try {
    const html = boundedHtml(
      start,
      blocks.map((block) => blockHtml(block, 3)),
    )
    await summary.emptyBuffer().addRaw(html).write()
  } catch (error) {
    summary.emptyBuffer()
    actionsLogger.warning(
      `GITHUB_STEP_SUMMARY (${process.env.GITHUB_STEP_SUMMARY}) could not hold the job summary: ${summaryFileProblem(error)}`,
    )
  }
}

/** GitHub refuses a job summary over 1 MiB: the summary stays under this, in bytes. */
export const SUMMARY_MAX_BYTES = 1000 * 1000

/** Whole blocks only: a block cut inside its HTML would end the HTML block, the rest read as Markdown. */
function boundedHtml(start: string, blocks: readonly string[]): string {
  const leftOut = (count: number) =>
    `<p>${plural(count, 'more part')} of this summary left out: a job summary holds at most 1 MiB.</p>\n`
  const room = SUMMARY_MAX_BYTES - Buffer.byteLength(leftOut(blocks.length))
  let html = start
  let used = Buffer.byteLength(start)
  for (const [index, block] of blocks.entries()) {
    const size = Buffer.byteLength(block)
    if (used + size > room) return html + leftOut(blocks.length - index)
    html += block
    used += size
  }
  return html
}

function blockHtml(block: ReportBlock, level: number): string {
  const summary = core.summary.emptyBuffer()
  if (block.kind === 'heading') summary.addHeading(inertHtml(block.text), level)
  else if (block.kind === 'text') summary.addRaw(`<p>${inertHtml(block.text)}</p>`, true)
  else {
    summary.addTable([
      block.table.header.map((data) => ({ data: inertHtml(data), header: true })),
      // An empty cell would be written as a lone <td>.
      ...block.table.rows.map((row) => row.map((cell) => cellHtml(cell) || '&nbsp;')),
    ])
  }
  const html = redact(summary.stringify())
  summary.emptyBuffer()
  return html
}

function inertHtml(text: string): string {
  return escapeHtml(visible(text))
}

/** @actions/core's refusal of a summary file it cannot access names neither the cause nor the variable. */
function summaryFileProblem(error: unknown): string {
  const file = process.env.GITHUB_STEP_SUMMARY ?? ''
  if (!errorMessage(error).startsWith('Unable to access summary file')) return errorMessage(error)
  if (!existsSync(path.dirname(file))) return 'neither the file nor its folder exists'
  return existsSync(file) ? 'it cannot be read and written (its permissions)' : 'the file does not exist'
}
