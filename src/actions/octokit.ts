// What this repository's actions send to GitHub (the pull request's comment, deployment statuses)
// leaves with the run's secrets redacted: one Octokit plugin every client is made with.

import type { getOctokit } from '@actions/github'
import { runSecrets } from '../common/secrets.ts'

type OctokitPlugin = NonNullable<Parameters<typeof getOctokit>[2]>

/** What Octokit needs as it is: where and how to send the request. */
const TRANSPORT = new Set(['method', 'url', 'baseUrl', 'headers', 'request', 'mediaType'])

/**
 * Every parameter of every request (a comment's body, a status's description) redacted before it is
 * sent: the last writer of what goes to GitHub, whatever made the text. The token's header is not a
 * parameter: it is sent as it must be.
 */
export const redactRequests: OctokitPlugin = (octokit) => {
  // In place: the hooks of a request share its options (the token's hook reads the same object).
  octokit.hook.before('request', (options) => {
    const parameters = options as Record<string, unknown>
    for (const key of Object.keys(parameters))
      if (!TRANSPORT.has(key)) parameters[key] = runSecrets.redactValue(parameters[key])
  })
  return {}
}
