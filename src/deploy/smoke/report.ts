// The smoke test in the words of the summary, the CLI's report and the pull request's comment.

import type { SmokeResult } from './verdict.ts'

export type { SmokeResult }

// Here, not beside the check (index.ts): the reports that name it never load the browser's driver.
/** A deploy whose game did not start in the browser (on-verify-failure rollback or fail). */
export class SmokeTestError extends Error {
  override name = 'SmokeTestError'
  readonly smoke: SmokeResult
  constructor(message: string, smoke: SmokeResult, options?: ErrorOptions) {
    super(message, options)
    this.smoke = smoke
  }
}

/** "started in Chromium 156 in 0.4 s: …", and on failure what to do and what was put back. */
export function smokeSentence(smoke: SmokeResult): string {
  const parts = [smoke.line]
  if (smoke.remedy) parts.push(smoke.remedy)
  if (smoke.rolledBackTo) parts.push(`the namespace was put back on version ${smoke.rolledBackTo}`)
  return parts.join('; ')
}

/** What a re-run does after a game that did not start. */
export function smokeRerun(smoke: SmokeResult): string {
  const now = smoke.rolledBackTo
    ? `The namespace serves version ${smoke.rolledBackTo} again, as before this run. `
    : ''
  return `${now}A re-run publishes this build again and opens it again: fix what the smoke test found first.`
}
