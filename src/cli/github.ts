// The CLI's GitHub, for `gamehost sweep`: whether a pull request is open, from GitHub's REST API
// (GITHUB_API_URL, as on a runner, else api.github.com). The comment and the deployments of a retired
// preview are the action's: the CLI retires the preview at the service only.

import { request, type Dispatcher } from 'undici'
import { errorMessage } from '../api/errors.ts'
import { GITHUB_CALL_TIMEOUT_MS } from '../common/timeouts.ts'
import { GITHUB_TOKEN_ENV } from '../inputs/constants.ts'
import type { PullRequestState, SweepGitHub } from '../operations/sweep.ts'
import packageJson from '../../package.json' with { type: 'json' }

export function cliGitHub(options: {
  token: string
  repository: string
  dispatcher: Dispatcher
  apiUrl?: string
}): SweepGitHub {
  const apiUrl = (options.apiUrl || 'https://api.github.com').replace(/\/+$/, '')
  return {
    async pullRequest(number, signal): Promise<PullRequestState> {
      const { status, body } = await getJson(`${apiUrl}/repos/${options.repository}/pulls/${number}`, signal)
      if (status === 404) throw new Error(`${options.repository} has no pull request #${number} (404)`)
      if (status !== 200 || typeof body?.state !== 'string') {
        const message = typeof body?.message === 'string' ? ` ${body.message}` : ''
        const hint =
          status === 401 || status === 403
            ? ` (the GitHub token, --github-token or ${GITHUB_TOKEN_ENV}, must read the repository's pull requests)`
            : ''
        throw new Error(`GitHub answered ${status}${message}${hint}`)
      }
      const head = body.head
      return {
        open: body.state === 'open',
        headRef: typeof head?.ref === 'string' ? head.ref : undefined,
        headSha: typeof head?.sha === 'string' ? head.sha : undefined,
      }
    },
  }

  async function getJson(url: string, signal: AbortSignal): Promise<{ status: number; body: PullBody }> {
    // A timer of our own, not AbortSignal.timeout(): that one is unref'd.
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), GITHUB_CALL_TIMEOUT_MS)
    try {
      const answer = await request(url, {
        dispatcher: options.dispatcher,
        signal: AbortSignal.any([signal, controller.signal]),
        headers: {
          accept: 'application/vnd.github+json',
          authorization: `Bearer ${options.token}`,
          'user-agent': `gamehost/${packageJson.version}`,
          'x-github-api-version': '2022-11-28',
        },
      })
      const body = (await answer.body.json().catch(() => undefined)) as PullBody
      return { status: answer.statusCode, body }
    } catch (error) {
      if (signal.aborted) throw error
      const why = controller.signal.aborted
        ? `within ${GITHUB_CALL_TIMEOUT_MS / 1000} s`
        : `(${errorMessage(error)})`
      throw new Error(`no answer from GitHub ${why}`, { cause: error })
    } finally {
      clearTimeout(timer)
    }
  }
}

type PullBody = { state?: unknown; message?: unknown; head?: { ref?: unknown; sha?: unknown } } | undefined
