// What this repository's actions send to GitHub (the pull request's comment, deployment statuses)
// leaves with the run's secrets redacted: one Octokit plugin every client is made with.

import type { getOctokit } from '@actions/github'
import { runSecrets } from '../common/secrets.ts'
import { describeGitHubError } from './github-errors.ts'

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

/** A client for `repository` that redacts what it sends, and its owner and name. */
export async function githubClient(token: string, repository: string) {
  // Loaded only when GitHub is called: Octokit costs start-up time and memory most runs never need.
  // "eager" keeps it inside dist/index.js: ncc wrote a separate chunk without license notices.
  const github = await import(/* webpackMode: "eager" */ '@actions/github')
  const [owner = '', repo = ''] = repository.split('/')
  return { octokit: github.getOctokit(token, {}, redactRequests), owner, repo }
}

/**
 * `call` on `repository`, ended after `timeoutMs` (or by `signal`); a failure goes to `failed` with
 * the reason in words: no answer in time, or what GitHub answered (describeGitHubError).
 */
export async function githubCall<T>(
  options: { token: string; repository: string; timeoutMs: number; signal?: AbortSignal },
  call: (octokit: Octokit, base: RepoCall) => Promise<T>,
  failed: (error: unknown, reason: string, timedOut: boolean) => T,
): Promise<T> {
  // A timer of our own, not AbortSignal.timeout(): that one is unref'd, and a hung call would then
  // let the process end with the step's outcome unwritten.
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), options.timeoutMs)
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal
  try {
    const { octokit, owner, repo } = await githubClient(options.token, options.repository)
    return await call(octokit, { owner, repo, request: { signal } })
  } catch (error) {
    const timedOut = controller.signal.aborted
    const reason = timedOut
      ? `no answer from GitHub within ${options.timeoutMs / 1000} s`
      : describeGitHubError(error)
    return failed(error, reason, timedOut)
  } finally {
    clearTimeout(timer)
  }
}
