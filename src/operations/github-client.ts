// GitHub's REST API for both faces, on undici: a timer of its own per call, redirects followed, and every
// body and query redacted before it is sent (the last writer of what goes to GitHub).

import { STATUS_CODES } from 'node:http'
import { interceptors, request, type Dispatcher } from 'undici'
import { messageOf } from '../common/format.ts'
import { inputName } from '../common/input-naming.ts'
import { errorCodes } from '../common/network.ts'
import { runSecrets } from '../common/secrets.ts'
import { GITHUB_CALL_TIMEOUT_MS } from '../common/timeouts.ts'
import { Input } from '../inputs/constants.ts'
import type { PullRequestState } from './previews.ts'
import packageJson from '../../package.json' with { type: 'json' }

const DEFAULT_API_URL = 'https://api.github.com'
const API_VERSION = '2022-11-28'
/** A renamed or moved repository answers with a redirect to its new place. */
const MAX_REDIRECTIONS = 3

export interface GitHubOptions {
  token: string
  /** `owner/name`. */
  repository: string
  apiUrl?: string | undefined
  dispatcher: Dispatcher
  timeoutMs?: number
  signal?: AbortSignal
}

/** GitHub answered, with a failure: `403 Resource not accessible by integration`. */
export class GitHubAnswerError extends Error {
  override name = 'GitHubAnswerError'
  readonly status: number
  /** The Retry-After GitHub asked for, as sent. */
  readonly retryAfter: string | undefined
  constructor(status: number, said: string, retryAfter: string | undefined) {
    super(`${status} ${said}`)
    this.status = status
    this.retryAfter = retryAfter
  }
}

/** A request GitHub never answered: refused, reset, not resolved. */
export class GitHubConnectionError extends Error {
  override name = 'GitHubConnectionError'
  constructor(cause: unknown) {
    const code = errorCodes(cause).find((c) => /^[A-Z][A-Z0-9_]+$/.test(c))
    super(`connection error, no answer from GitHub${code ? ` (${code})` : ''}: ${messageOf(cause)}`, {
      cause,
    })
  }
}

export function githubStatus(error: unknown): number | undefined {
  return error instanceof GitHubAnswerError ? error.status : undefined
}

type Query = Record<string, string | number>

/** One call's requests: paths from the API's root (`/repos/owner/name/...`, `/user`). */
export interface GitHubApi {
  /** `/repos/owner/name` */
  readonly repo: string
  get<T>(path: string, query?: Query): Promise<T>
  post<T>(path: string, body: object): Promise<T>
  patch<T>(path: string, body: object): Promise<T>
  delete(path: string): Promise<void>
}

/** `call`, ended after its time-out or by its signal; a failure goes to `failed`, with the reason in words. */
export async function githubCall<T>(
  options: GitHubOptions,
  call: (github: GitHubApi) => Promise<T>,
  failed: (error: unknown, reason: string, status: number | undefined, timedOut: boolean) => T,
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? GITHUB_CALL_TIMEOUT_MS
  // A timer of our own, not AbortSignal.timeout(): that one is unref'd, and a hung call would then
  // let the process end with the step's outcome unwritten.
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), timeoutMs)
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal
  try {
    return await call(githubApi(options, signal))
  } catch (error) {
    const timedOut = controller.signal.aborted
    const reason = timedOut ? `no answer from GitHub within ${timeoutMs / 1000} s` : messageOf(error)
    return failed(error, reason, githubStatus(error), timedOut)
  } finally {
    clearTimeout(timer)
  }
}

function githubApi(options: GitHubOptions, signal: AbortSignal): GitHubApi {
  const base = (options.apiUrl || DEFAULT_API_URL).replace(/\/+$/, '')
  const dispatcher = options.dispatcher.compose(interceptors.redirect({ maxRedirections: MAX_REDIRECTIONS }))
  const send = async (method: Dispatcher.HttpMethod, path: string, query?: Query, body?: object) => {
    const url = new URL(base + path)
    for (const [name, value] of Object.entries(query ?? {}))
      url.searchParams.set(name, runSecrets.redact(String(value)))
    let answer: Dispatcher.ResponseData
    let text: string
    try {
      answer = await request(url, {
        method,
        dispatcher,
        signal,
        headers: {
          accept: 'application/vnd.github+json',
          authorization: `Bearer ${options.token}`,
          'user-agent': `gamehost/${packageJson.version}`,
          'x-github-api-version': API_VERSION,
          ...(body ? { 'content-type': 'application/json; charset=utf-8' } : {}),
        },
        body: body ? JSON.stringify(runSecrets.redactValue(body)) : undefined,
      })
      text = await answer.body.text()
    } catch (error) {
      if (signal.aborted) throw error
      throw new GitHubConnectionError(error)
    }
    const data = parseJson(text)
    if (answer.statusCode >= 400) {
      const retryAfter = answer.headers['retry-after']
      throw new GitHubAnswerError(
        answer.statusCode,
        failureText(answer.statusCode, data),
        typeof retryAfter === 'string' ? retryAfter : undefined,
      )
    }
    return data
  }
  return {
    repo: `/repos/${options.repository}`,
    get: async <T>(path: string, query?: Query) => (await send('GET', path, query)) as T,
    post: async <T>(path: string, body: object) => (await send('POST', path, undefined, body)) as T,
    patch: async <T>(path: string, body: object) => (await send('PATCH', path, undefined, body)) as T,
    delete: async (path: string) => void (await send('DELETE', path)),
  }
}

function parseJson(text: string): unknown {
  try {
    return text ? (JSON.parse(text) as unknown) : undefined
  } catch {
    return undefined
  }
}

/** GitHub's message, its errors and its documentation's URL, as Octokit said them; else the status's name. */
function failureText(status: number, data: unknown): string {
  const { message, errors, documentation_url: docs } = (data ?? {}) as Record<string, unknown>
  if (typeof message !== 'string') return STATUS_CODES[status] ?? 'Unknown error'
  const listed = Array.isArray(errors) ? `: ${errors.map((e) => JSON.stringify(e)).join(', ')}` : ''
  return `${message}${listed}${typeof docs === 'string' ? ` - ${docs}` : ''}`
}

/** GET /repos/{owner}/{repo}/pulls/{number}; throws, saying why, when GitHub cannot tell. */
export function readPullRequestState(options: GitHubOptions, number: number): Promise<PullRequestState> {
  return githubCall(
    options,
    async (github) => {
      const pull = await github.get<PullBody>(`${github.repo}/pulls/${number}`)
      if (typeof pull?.state !== 'string')
        throw new Error(`GitHub's answer for pull request #${number} has no state`)
      return stateOf(pull)
    },
    (error, reason, status) => {
      if (status === 404)
        throw new Error(`${options.repository} has no pull request #${number} (404)`, { cause: error })
      throwRefused(error, reason, status)
    },
  )
}

function throwRefused(error: unknown, reason: string, status: number | undefined): never {
  const refused = status === 401 || status === 403
  const advice = refused ? ` (${inputName(Input.GitHubToken)} needs pull-requests: read)` : ''
  throw new Error(reason + advice, { cause: error })
}

type PullBody = { state?: unknown; head?: { ref?: unknown; sha?: unknown } } | undefined

function stateOf(pull: NonNullable<PullBody>): PullRequestState {
  const { ref, sha } = pull.head ?? {}
  return {
    open: pull.state === 'open',
    headRef: typeof ref === 'string' ? ref : undefined,
    headSha: typeof sha === 'string' ? sha : undefined,
  }
}

/** Pages of 100 open pull requests listed at most: past them, a preview's pull request is asked about alone. */
const OPEN_PAGES_MAX = 10

/** GET /repos/{owner}/{repo}/pulls?state=open, page by page; throws, saying why, when GitHub cannot tell. */
export function listOpenPullRequests(options: GitHubOptions): Promise<Map<number, PullRequestState>> {
  return githubCall(
    options,
    async (github) => {
      const open = new Map<number, PullRequestState>()
      for (let page = 1; page <= OPEN_PAGES_MAX; page++) {
        const query = { state: 'open', per_page: 100, page }
        const pulls = await github.get<unknown>(`${github.repo}/pulls`, query)
        if (!Array.isArray(pulls))
          throw new Error("GitHub's answer listing the open pull requests is no list")
        for (const pull of pulls as Array<PullBody & { number?: unknown }>) {
          if (typeof pull?.number === 'number' && pull.state === 'open') open.set(pull.number, stateOf(pull))
        }
        if (pulls.length < 100) break
      }
      return open
    },
    throwRefused,
  )
}
