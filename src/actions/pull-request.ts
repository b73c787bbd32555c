import { UsageError } from '../api/errors.ts'
import { Input } from '../inputs/constants.ts'
import { githubStatus } from './github-errors.ts'
import { githubCall } from './octokit.ts'

/** Where a workflow_run's build ran: the head repository (owner/repo) and branch of its event. */
export interface BuildHead {
  repository: string | undefined
  branch: string | undefined
}

/**
 * Checks that pull request `number` of `repository` is the one the workflow_run's build ran for (the
 * same head repository and branch, as GitHub itself matches runs to pull requests). The build hands the
 * number over, and a fork's build runs the fork's code: it could name another pull request, whose
 * preview and comment this run would then take over.
 */
export async function checkPullRequest(options: {
  token: string
  repository: string
  number: number
  build: BuildHead
  /** How long GitHub may take to answer (default 30 s): a hung call fails the step, never holds it. */
  timeoutMs?: number
}): Promise<void> {
  const head = await githubCall(
    { ...options, timeoutMs: options.timeoutMs ?? 30_000 },
    async (octokit, repo) =>
      (await octokit.rest.pulls.get({ ...repo, pull_number: options.number })).data.head,
    (error, reason) => {
      const status = githubStatus(error)
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
