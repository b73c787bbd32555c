// The deploy's guard against an older build asks GitHub how two commits stand: this is its
// CompareCommits (src/deploy/older.ts) on @actions/github, for the run's repository and token.

import type { CommitStatus, CompareCommits } from '../deploy/older.ts'
import { describeGitHubError, githubStatus } from './github-errors.ts'
import { redactRequests } from './octokit.ts'

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
  const [owner = '', repo = ''] = options.repository.split('/')
  const timeoutMs = options.timeoutMs ?? 30_000
  return async (base, head) => {
    const github = await import(/* webpackMode: "eager" */ '@actions/github')
    const octokit = github.getOctokit(options.token, {}, redactRequests)
    // A timer of our own, not AbortSignal.timeout(): that one is unref'd (see comment.ts).
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), timeoutMs)
    try {
      const { data } = await octokit.rest.repos.compareCommitsWithBasehead({
        owner,
        repo,
        basehead: `${base}...${head}`,
        per_page: 1,
        request: { signal: controller.signal },
      })
      return STATUSES.includes(data.status) ? data.status : undefined
    } catch (error) {
      const status = githubStatus(error)
      if (status === 404 || status === 422) return undefined
      throw new Error(
        controller.signal.aborted
          ? `no answer from GitHub within ${timeoutMs / 1000} s`
          : `GitHub's compare failed: ${describeGitHubError(error)}`,
        { cause: error },
      )
    } finally {
      clearTimeout(timer)
    }
  }
}
