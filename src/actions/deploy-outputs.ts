import { setOutput, setOutputs as setOutputValues, writeReport } from './action.ts'
import { Output } from '../inputs/constants.ts'
import type { DeployResult } from '../deploy/pipeline.ts'
import { deployOutputs, deployReport, failureReport, skipReport } from '../deploy/report.ts'

/** The outputs of a run that deployed nothing (no token on a fork). */
export function setSkippedOutputs(): void {
  for (const name of Object.values(Output)) setOutput(name, name === Output.Skipped ? 'true' : '')
}

export async function writeSkipSummary(reason: string): Promise<void> {
  await writeReport(skipReport(reason))
}

export function setOutputs(result: DeployResult): void {
  setOutputValues(deployOutputs(result))
}

/** A table of what was provisioned and uploaded, with sizes and timing, and the largest files. */
export async function writeSummary(result: DeployResult): Promise<void> {
  await writeReport(deployReport(result))
}

/** The summary of a failed or cancelled deploy: what failed, what was done before, what a re-run does. */
export async function writeFailureSummary(error: unknown, partial: DeployResult | undefined): Promise<void> {
  await writeReport(failureReport(error, partial))
}
