import type { Logger } from '../common/logger.ts'
import { describeGitHubError, githubStatus } from './github-errors.ts'
import { redactRequests } from './octokit.ts'
import { plural } from '../common/format.ts'

/** All the calls together: the closing run ends in bounded time whatever GitHub does. */
const BUDGET_MS = 30_000

/**
 * Marks the pull request's GitHub deployments inactive, so GitHub's deployment view no longer offers
 * a closed preview. GitHub made them for the jobs that declared `environment:`, on the pull request's
 * head branch or its merge ref. Never throws: a refusal (the token lacks `deployments: write`) or a
 * GitHub failure is a warning, and the preview is closed all the same.
 */
export async function retireDeployments(options: {
  token: string
  repository: string
  refs: string[]
  logger: Pick<Logger, 'info' | 'warning'>
}): Promise<number> {
  const [owner = '', repo = ''] = options.repository.split('/')
  // A timer of our own, not AbortSignal.timeout(): that one is unref'd (see comment.ts).
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), BUDGET_MS)
  const request = { signal: controller.signal }
  try {
    const github = await import(/* webpackMode: "eager" */ '@actions/github')
    const octokit = github.getOctokit(options.token, {}, redactRequests)
    let retired = 0
    for (const ref of new Set(options.refs)) {
      const { data: deployments } = await octokit.rest.repos.listDeployments({
        owner,
        repo,
        ref,
        per_page: 100,
        request,
      })
      for (const deployment of deployments) {
        const { data: statuses } = await octokit.rest.repos.listDeploymentStatuses({
          owner,
          repo,
          deployment_id: deployment.id,
          per_page: 1,
          request,
        })
        if (statuses[0]?.state === 'inactive') continue
        await octokit.rest.repos.createDeploymentStatus({
          owner,
          repo,
          deployment_id: deployment.id,
          state: 'inactive',
          request,
        })
        retired++
      }
    }
    options.logger.info(`Marked ${plural(retired, 'GitHub deployment')} of the pull request inactive`)
    return retired
  } catch (error) {
    // A connection error reads as one, not as the status 500 Octokit gives it.
    const status = githubStatus(error)
    options.logger.warning(
      `Could not mark the pull request's GitHub deployments inactive: ${describeGitHubError(error)}` +
        (status === 403 || status === 404
          ? ". Give the job 'permissions: deployments: write' for GitHub's deployment view to show the preview as ended."
          : '.') +
        ' The preview is closed all the same.',
    )
    return 0
  } finally {
    clearTimeout(timer)
  }
}
