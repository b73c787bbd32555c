import os from 'node:os'
import * as core from '@actions/core'
import { ValidationFailedError, errorMessage } from './api/errors.ts'
import { validationTitle } from './api/rules.ts'
import { Input } from './constants.ts'
import { deploy } from './deploy.ts'
import { readInputs } from './inputs.ts'
import type { Logger } from './logger.ts'
import { setOutputs, writeSummary } from './report.ts'

/** The deploy action: inputs -> provision -> collect -> upload -> report, and one setFailed. */
export async function run(): Promise<void> {
  try {
    const token = core.getInput(Input.Token)
    if (token) core.setSecret(token)
    const inputs = readInputs((name) => core.getInput(name), {
      repository: process.env.GITHUB_REPOSITORY,
      ref: process.env.GITHUB_REF,
      sha: process.env.GITHUB_SHA,
    })
    core.debug(`Inputs: ${JSON.stringify({ ...inputs, token: inputs.token ? '***' : '' })}`)
    const result = await deploy(inputs, {
      logger: actionsLogger,
      tempDir: process.env.RUNNER_TEMP || os.tmpdir(),
    })
    setOutputs(result)
    await writeSummary(result)
    if (result.siteId) core.info(`Deployed site ${result.siteId} (upload ${result.uploadId})`)
  } catch (error) {
    if (error instanceof ValidationFailedError) {
      for (const problem of error.problems) {
        core.error(problem.description, { title: validationTitle(problem.path) })
      }
    }
    core.setFailed(errorMessage(error))
  }
}

const actionsLogger: Logger = {
  info: (message) => core.info(message),
  warning: (message, annotation) => core.warning(message, annotation),
  error: (message, annotation) => core.error(message, annotation),
  debug: (message) => core.debug(message),
  group: (name, fn) => core.group(name, fn),
}
