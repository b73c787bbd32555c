// The actions' calls to GitHub, each in bounded time through githubCall, at GITHUB_API_URL.

import type { Dispatcher } from 'undici'
import { UsageError } from '../api/errors.ts'
import { createAgent } from '../api/http.ts'
import type { Logger } from '../common/logger.ts'
import { plural } from '../common/format.ts'
import type { CommitStatus, CompareCommits } from '../deploy/target/older.ts'
import { Input } from '../inputs/constants.ts'
import { githubCall, type GitHubOptions } from '../operations/github-client.ts'

/** One pool for the process's GitHub calls: its idle connections hold no process open. */
let pool: Dispatcher | undefined

export function actionsGitHub(
  options: Pick<GitHubOptions, 'token' | 'repository' | 'timeoutMs' | 'signal'>,
): GitHubOptions {
  const { token, repository, timeoutMs, signal } = options
  pool ??= createAgent()
  return { token, repository, timeoutMs, signal, apiUrl: process.env.GITHUB_API_URL, dispatcher: pool }
}

const STATUSES: readonly string[] = ['ahead', 'behind', 'diverged', 'identical'] satisfies CommitStatus[]

/** A commit GitHub does not have (404) or cannot compare (422) is undefined: the guard publishes, saying so. */
export function githubCompareCommits(options: { token: string; repository: string }): CompareCommits {
  return (base, head) =>
    githubCall(
      actionsGitHub(options),
      async (github) => {
        const path = `${github.repo}/compare/${encodeURIComponent(base)}...${encodeURIComponent(head)}`
        const { status } = await github.get<{ status?: unknown }>(path, { per_page: 1 })
        return typeof status === 'string' && STATUSES.includes(status) ? (status as CommitStatus) : undefined
      },
      (error, reason, status, timedOut) => {
        if (status === 404 || status === 422) return undefined
        throw new Error(timedOut ? reason : `GitHub's compare failed: ${reason}`, { cause: error })
      },
    )
}

type PullHead = { ref: string; repo: { full_name: string } | null }

/** Where a workflow_run's build ran. */
export interface BuildHead {
  repository: string | undefined
  branch: string | undefined
}

/**
 * The same head repository and branch, as GitHub matches runs to pull requests: a fork's build hands
 * the number over, and could name another pull request, whose preview this run would then take over.
 */
export async function checkPullRequest(options: {
  token: string
  repository: string
  number: number
  build: BuildHead
  timeoutMs?: number
}): Promise<void> {
  const head = await githubCall(
    actionsGitHub(options),
    async (github) => (await github.get<{ head: PullHead }>(`${github.repo}/pulls/${options.number}`)).head,
    (error, reason, status) => {
      if (status === 404)
        throw new UsageError(
          `${Input.PullRequest}: ${options.repository} has no pull request #${options.number}`,
        )
      throw new Error(
        `Could not read pull request #${options.number} to check it is the one this build ran for: ${reason}` +
          (status === 401 || status === 403 ? ' (github-token needs pull-requests: read)' : ''),
        { cause: error },
      )
    },
  )
  const built = `${options.build.repository ?? '?'}:${options.build.branch ?? '?'}`
  const wanted = `${head.repo?.full_name ?? '(deleted fork)'}:${head.ref}`
  if (built !== wanted) {
    throw new UsageError(
      `${Input.PullRequest} #${options.number} is not the pull request this build ran for: its head is ${wanted}, ` +
        `the build ran on ${built}. Nothing was deployed.`,
    )
  }
}

/**
 * So that GitHub's deployment view no longer offers a closed preview. GitHub made them for the jobs that
 * declared `environment:`, on the head branch or the merge ref. Never throws: a failure is a warning.
 */
export async function retireDeployments(options: {
  token: string
  repository: string
  pullRequest: { number: number; headRef?: string | undefined }
  logger: Pick<Logger, 'info' | 'warning'>
}): Promise<number> {
  const { number, headRef } = options.pullRequest
  const refs = new Set([headRef, `refs/pull/${number}/merge`].filter((ref): ref is string => !!ref))
  return githubCall(
    actionsGitHub(options),
    async (github) => {
      let retired = 0
      for (const ref of refs) {
        const query = { ref, per_page: 100 }
        const deployments = await github.get<Array<{ id: number }>>(`${github.repo}/deployments`, query)
        for (const { id } of deployments) {
          const statuses = `${github.repo}/deployments/${id}/statuses`
          const [latest] = await github.get<Array<{ state?: string }>>(statuses, { per_page: 1 })
          if (latest?.state === 'inactive') continue
          await github.post(statuses, { state: 'inactive' })
          retired++
        }
      }
      options.logger.info(`Marked ${plural(retired, 'GitHub deployment')} of the pull request inactive`)
      return retired
    },
    (_error, reason, status) => {
      options.logger.warning(
        `Could not mark the pull request's GitHub deployments inactive: ${reason}` +
          (status === 403 || status === 404
            ? ". Give the job 'permissions: deployments: write' for GitHub's deployment view to show the preview as ended."
            : '.') +
          ' The preview is closed all the same.',
      )
      return 0
    },
  )
}
