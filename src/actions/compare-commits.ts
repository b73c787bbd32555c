// The deploy's guard against an older build asks GitHub how two commits stand: this is its
// CompareCommits (src/deploy/older.ts) on @actions/github, for the run's repository and token.

import type { CommitStatus, CompareCommits } from '../deploy/older.ts'
import { githubStatus } from './github-errors.ts'
import { githubCall } from './octokit.ts'

const STATUSES: readonly string[] = ['ahead', 'behind', 'diverged', 'identical'] satisfies CommitStatus[]

/**
 * GET /repos/{owner}/{repo}/compare/{base}...{head}: its `status`. A commit GitHub does not have (404)
 * or cannot compare (422) is undefined: the guard then publishes, saying so. No answer within
 * `timeoutMs` fails the comparison (the guard says so and publishes): a hung call never holds the deploy.
 */
export function githubCompareCommits(options: {
  token: string
  repository: string
  timeoutMs?: number
}): CompareCommits {
  return (base, head) =>
    githubCall(
      { ...options, timeoutMs: options.timeoutMs ?? 30_000 },
      async (octokit, repo) => {
        const { data } = await octokit.rest.repos.compareCommitsWithBasehead({
          ...repo,
          basehead: `${base}...${head}`,
          per_page: 1,
        })
        return STATUSES.includes(data.status) ? data.status : undefined
      },
      (error, reason, timedOut) => {
        const status = githubStatus(error)
        if (status === 404 || status === 422) return undefined
        throw new Error(timedOut ? reason : `GitHub's compare failed: ${reason}`, { cause: error })
      },
    )
}
