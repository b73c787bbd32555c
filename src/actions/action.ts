// What every action of this repository shares: the logger on @actions/core, the one place a step
// fails, the job summary of a report, the outputs. Each action's run() is built on these.

import * as core from '@actions/core'
import { ValidationFailedError, errorMessage } from '../api/errors.ts'
import { validationTitle } from '../api/rules.ts'
import { Input } from '../inputs/constants.ts'
import { urlUserInfo, type Connection } from '../inputs/common.ts'
import type { Logger } from '../common/logger.ts'
import type { Operation } from '../operations/operation.ts'
import { cellHtml, escapeHtml, type OutputValue, type Report } from '../common/report.ts'

export const actionsLogger: Logger = {
  info: (message) => core.info(message),
  warning: (message, annotation) => core.warning(message, annotation),
  error: (message, annotation) => core.error(message, annotation),
  debug: (message) => core.debug(message),
  group: (name, fn) => core.group(name, fn),
}

/**
 * Runs an action's body: registers the secrets first, so nothing logged afterwards shows them, and
 * fails the step exactly once, here, for whatever the body throws. A validation error becomes one
 * annotation per problem before the step's failure message.
 */
export async function runAction(secretInputs: readonly string[], body: () => Promise<void>): Promise<void> {
  try {
    for (const name of secretInputs) {
      const secret = core.getInput(name)
      if (secret) core.setSecret(secret)
    }
    // api-url with credentials is refused, and they are masked first, so no line can show them.
    const userInfo = urlUserInfo(core.getInput(Input.ApiUrl))
    if (userInfo) {
      core.setSecret(userInfo)
      const password = userInfo.slice(userInfo.indexOf(':') + 1)
      if (userInfo.includes(':') && password) core.setSecret(password)
    }
    await body()
  } catch (error) {
    if (error instanceof ValidationFailedError) {
      for (const problem of error.problems)
        core.error(problem.description, { title: problem.title ?? validationTitle(problem.path) })
    }
    core.setFailed(errorMessage(error))
  }
}

/** The run() of an operation's action: inputs, the call, outputs, summary, and the verdict. */
export function operationAction<I extends Connection, R>(operation: Operation<I, R>): () => Promise<void> {
  return () =>
    runAction([Input.Token], async () => {
      const inputs = operation.read((name) => core.getInput(name))
      core.debug(`Inputs: ${JSON.stringify({ ...inputs, token: '***' })}`)
      const result = await operation.run(inputs, { logger: actionsLogger })
      setOutputs(operation.outputs(result))
      await writeReport(operation.report(result, inputs))
      const failure = operation.failure?.(result, inputs)
      if (failure) throw failure
    })
}

/** Sets every output: strings as they are, null as empty, anything else as JSON. */
export function setOutputs(outputs: Record<string, OutputValue>): void {
  for (const [name, value] of Object.entries(outputs)) core.setOutput(name, outputText(value))
}

export function outputText(value: OutputValue): string {
  if (value === null) return ''
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** Writes the report as the job summary: the title, then its headings, tables and text. */
export async function writeReport(report: Report): Promise<void> {
  const summary = core.summary.addHeading(escapeHtml(report.title), 2)
  for (const block of report.blocks) {
    if (block.kind === 'heading') summary.addHeading(escapeHtml(block.text), 3)
    else if (block.kind === 'text') summary.addRaw(escapeHtml(block.text), true)
    else {
      summary.addTable([
        block.table.header.map((data) => ({ data: escapeHtml(data), header: true })),
        // An empty cell would be written as a lone <td>.
        ...block.table.rows.map((row) => row.map((cell) => cellHtml(cell) || '&nbsp;')),
      ])
    }
  }
  // act, Gitea and older GHES have no job summary: the report is then lost, never the step.
  if (!process.env.GITHUB_STEP_SUMMARY) {
    summary.emptyBuffer()
    core.warning('GITHUB_STEP_SUMMARY is not set (act, Gitea or an older GHES?): the job summary is skipped.')
    return
  }
  try {
    await summary.write()
  } catch (error) {
    summary.emptyBuffer()
    core.warning(`Could not write the job summary: ${errorMessage(error)}`)
  }
}
