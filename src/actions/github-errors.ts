// What a failed GitHub call was: an answer GitHub gave (a status), or no answer at all. Octokit reports
// a request that never reached GitHub (refused, reset, not resolved) as a RequestError with status 500
// and no response: shown as "500" it reads as GitHub's own failure, and hides a connection error.

import { errorCodes } from '../common/network.ts'

/** The HTTP status GitHub answered with; undefined when GitHub gave no answer (a connection error). */
export function githubStatus(error: unknown): number | undefined {
  const { status, response } = (error ?? {}) as { status?: unknown; response?: unknown }
  // An answer comes with its response; Octokit's status 500 without one is its own, for "no answer".
  if (typeof status !== 'number' || response === undefined || response === null) return undefined
  return status
}

/** True when the call got no answer from GitHub: the connection failed, not GitHub. */
function isGitHubConnectionError(error: unknown): boolean {
  const { status, response } = (error ?? {}) as { status?: unknown; response?: unknown }
  return typeof status === 'number' && (response === undefined || response === null)
}

/**
 * The failure in words: `403 Resource not accessible`, or `connection error (ECONNREFUSED): connect
 * ECONNREFUSED 127.0.0.1:443` for a call that got no answer.
 */
export function describeGitHubError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const status = githubStatus(error)
  if (status !== undefined) return `${status} ${message}`
  if (!isGitHubConnectionError(error)) return message
  const code = errorCodes(error).find((c) => /^[A-Z][A-Z0-9_]+$/.test(c))
  return `connection error, no answer from GitHub${code ? ` (${code})` : ''}: ${message}`
}
