import type { Logger } from '../common/logger.ts'
import { githubStatus } from './github-errors.ts'
import { githubCall } from './octokit.ts'
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
  return githubCall(
    { ...options, timeoutMs: BUDGET_MS },
    async (octokit, repo) => {
      let retired = 0
      for (const ref of new Set(options.refs)) {
        const { data: deployments } = await octokit.rest.repos.listDeployments({
          ...repo,
          ref,
          per_page: 100,
        })
        for (const { id } of deployments) {
          const { data: statuses } = await octokit.rest.repos.listDeploymentStatuses({
            ...repo,
            deployment_id: id,
            per_page: 1,
          })
          if (statuses[0]?.state === 'inactive') continue
          await octokit.rest.repos.createDeploymentStatus({ ...repo, deployment_id: id, state: 'inactive' })
          retired++
        }
      }
      options.logger.info(`Marked ${plural(retired, 'GitHub deployment')} of the pull request inactive`)
      return retired
    },
    (error, reason) => {
      const status = githubStatus(error)
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
