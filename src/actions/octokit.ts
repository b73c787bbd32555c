// What this repository's actions send to GitHub (the pull request's comment, deployment statuses)
// leaves with the run's secrets redacted: one Octokit plugin every client is made with. And what a
// failed call was: an answer GitHub gave (a status), or no answer at all.

import type { getOctokit } from '@actions/github'
import { messageOf } from '../common/format.ts'
import { errorCodes } from '../common/network.ts'
import { runSecrets } from '../common/secrets.ts'
import { GITHUB_CALL_TIMEOUT_MS } from '../common/timeouts.ts'

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

export type Octokit = ReturnType<typeof getOctokit>
export interface RepoCall {
  owner: string
  repo: string
  request: { signal: AbortSignal }
}

async function githubClient(token: string, repository: string) {
  // Loaded only when GitHub is called: Octokit costs start-up time and memory most runs never need.
  // "eager" keeps it inside dist/index.js: ncc wrote a separate chunk without license notices.
  const github = await import(/* webpackMode: "eager" */ '@actions/github')
  const [owner = '', repo = ''] = repository.split('/')
  return { octokit: github.getOctokit(token, {}, redactRequests), owner, repo }
}

/**
 * `call` on `repository`, ended after `timeoutMs` (default GITHUB_CALL_TIMEOUT_MS) or by
 * `signal`; a failure goes to `failed` with the reason in words and the status GitHub answered.
 */
export async function githubCall<T>(
  options: { token: string; repository: string; timeoutMs?: number; signal?: AbortSignal },
  call: (octokit: Octokit, base: RepoCall) => Promise<T>,
  failed: (error: unknown, reason: string, status: number | undefined, timedOut: boolean) => T,
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? GITHUB_CALL_TIMEOUT_MS
  // A timer of our own, not AbortSignal.timeout(): that one is unref'd, and a hung call would then
  // let the process end with the step's outcome unwritten.
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), timeoutMs)
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal
  try {
    const { octokit, owner, repo } = await githubClient(options.token, options.repository)
    return await call(octokit, { owner, repo, request: { signal } })
  } catch (error) {
    const timedOut = controller.signal.aborted
    const reason = timedOut
      ? `no answer from GitHub within ${timeoutMs / 1000} s`
      : describeGitHubError(error)
    return failed(error, reason, githubStatus(error), timedOut)
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The HTTP status GitHub answered with; undefined when GitHub gave no answer. Octokit reports a request
 * that never reached GitHub (refused, reset, not resolved) as status 500 with no response: shown as
 * "500" it would read as GitHub's own failure, and hide a connection error.
 */
export function githubStatus(error: unknown): number | undefined {
  const { status, response } = (error ?? {}) as { status?: unknown; response?: unknown }
  return typeof status === 'number' && response != null ? status : undefined
}

/**
 * The failure in words: `403 Resource not accessible`, or `connection error (ECONNREFUSED): connect
 * ECONNREFUSED 127.0.0.1:443` for a call that got no answer.
 */
export function describeGitHubError(error: unknown): string {
  const message = messageOf(error)
  const status = githubStatus(error)
  if (status !== undefined) return `${status} ${message}`
  if (typeof (error as { status?: unknown } | null)?.status !== 'number') return message
  const code = errorCodes(error).find((c) => /^[A-Z][A-Z0-9_]+$/.test(c))
  return `connection error, no answer from GitHub${code ? ` (${code})` : ''}: ${message}`
}
