import { UsageError } from '../api/errors.ts'
import { Input } from '../inputs/constants.ts'
import { describeGitHubError, githubStatus } from './github-errors.ts'
import { redactRequests } from './octokit.ts'

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
  const [owner = '', repo = ''] = options.repository.split('/')
  const github = await import(/* webpackMode: "eager" */ '@actions/github')
  const octokit = github.getOctokit(options.token, {}, redactRequests)
  let head: { ref: string; repo: { full_name: string } | null }
  const timeoutMs = options.timeoutMs ?? 30_000
  // A timer of our own, not AbortSignal.timeout(): that one is unref'd (see comment.ts).
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), timeoutMs)
  const { signal } = controller
  try {
    head = (await octokit.rest.pulls.get({ owner, repo, pull_number: options.number, request: { signal } }))
      .data.head
  } catch (error) {
    const status = githubStatus(error)
    if (status === 404) {
      throw new UsageError(
        `${Input.PullRequest}: ${options.repository} has no pull request #${options.number}`,
      )
    }
    // A connection error is no permission problem: Octokit's status 500 for it is not GitHub's.
    throw new Error(
      `Could not read pull request #${options.number} to check it is the one this build ran for: ` +
        (signal.aborted ? `no answer from GitHub within ${timeoutMs / 1000} s` : describeGitHubError(error)) +
        (status === 401 || status === 403 ? ' (github-token needs pull-requests: read)' : ''),
      { cause: error },
    )
  } finally {
    clearTimeout(timer)
  }
  const built = `${options.build.repository ?? '?'}:${options.build.branch ?? '?'}`
  const wanted = `${head.repo?.full_name ?? '(deleted fork)'}:${head.ref}`
  if (built !== wanted) {
    throw new UsageError(
      `${Input.PullRequest} #${options.number} is not the pull request this build ran for: its head is ${wanted}, ` +
        `the build ran on ${built}. Nothing was deployed.`,
    )
  }
}
