// Entry of the sweep action (sweep/action.yml): exports run(), which the bundle's index (dist/sweep/index.js,
// made by scripts/package.ts) calls. Nothing runs at import, so `@github/local-action` can run it too.
// GitHub is asked through Octokit here: whether each pull request is open, and, for each preview
// retired, what the `closed` run does on GitHub (the sticky comment, the deployments made inactive).
import { UsageError } from '../api/errors.ts'
import { Input } from '../inputs/constants.ts'
import type { Target } from '../inputs/deploy.ts'
import {
  sweepOperation,
  type PullRequestState,
  type RetiredPreview,
  type SweepGitHub,
} from '../operations/sweep.ts'
import { actionsLogger, operationAction } from './action.ts'
import { stickyComment } from './comment.ts'
import { retireDeployments } from './deployments.ts'
import { readEvent, type RunEvent } from './event.ts'
import { githubStatus } from './github-errors.ts'
import { previewKey } from './preview.ts'
import { commentAfter } from './preview-record.ts'
import { githubCall } from './octokit.ts'

/** How long GitHub may take to say whether one pull request is open. */
const PULL_REQUEST_TIMEOUT_MS = 30_000

export const run = operationAction(
  sweepOperation((inputs) => {
    const event = readEvent(process.env, undefined)
    const { repository } = event
    if (!repository) {
      throw new UsageError(
        'GITHUB_REPOSITORY is not set: the sweep asks GitHub about the pull requests of the repository it runs in',
      )
    }
    return actionsGitHub(inputs.githubToken, { ...event, repository }, inputs)
  }),
)

function actionsGitHub(
  token: string,
  event: RunEvent & { repository: string },
  connection: { apiUrl: string; gameId: string },
): SweepGitHub {
  const { repository } = event
  return {
    pullRequest: (number, signal) => readPullRequestState(token, repository, number, signal),
    async retired(preview) {
      await updateComment(token, event, connection, preview)
      const refs = [preview.pullRequest.headRef, `refs/pull/${preview.number}/merge`].filter(
        (ref): ref is string => !!ref,
      )
      await retireDeployments({ token, repository, refs, logger: actionsLogger })
    },
  }
}

/** GET /repos/{owner}/{repo}/pulls/{number}: open or not, and its head. */
async function readPullRequestState(
  token: string,
  repository: string,
  number: number,
  signal: AbortSignal,
): Promise<PullRequestState> {
  return githubCall(
    { token, repository, timeoutMs: PULL_REQUEST_TIMEOUT_MS, signal },
    async (octokit, repo) => {
      const { data } = await octokit.rest.pulls.get({ ...repo, pull_number: number })
      return { open: data.state === 'open', headRef: data.head.ref, headSha: data.head.sha }
    },
    (error, reason) => {
      const status = githubStatus(error)
      if (status === 404)
        throw new Error(`${repository} has no pull request #${number} (404)`, { cause: error })
      throw new Error(
        reason +
          (status === 401 || status === 403 ? ` (${Input.GitHubToken} needs pull-requests: read)` : ''),
        { cause: error },
      )
    },
  )
}

/** The preview's sticky comment, when it has one, says the pull request was closed (as the `closed` run writes it). */
async function updateComment(
  token: string,
  event: RunEvent & { repository: string },
  connection: { apiUrl: string; gameId: string },
  preview: RetiredPreview,
): Promise<void> {
  const nameId = preview.result.namespace.name_id
  // The key the deploy gave the comment of the preview it made in namespace `nameId`.
  const target: Target = {
    kind: 'name',
    nameId,
    displayName: nameId,
    versionId: undefined,
    domain: undefined,
    matchmaker: undefined,
    publish: false,
    cdnDomain: undefined,
  }
  const key = previewKey({ connection, target, site: { name: '', nameGiven: false } })
  const comment = stickyComment({
    token,
    repository: event.repository,
    issue: preview.number,
    key,
    logger: actionsLogger,
  })
  const previous = await comment.load()
  if (!previous) {
    actionsLogger.info(`Pull request #${preview.number} has no preview comment of ${nameId} to update`)
    return
  }
  const { runUrl, repositoryUrl } = event
  const context = {
    key,
    previous,
    namespaceNameId: nameId,
    commit: preview.pullRequest.headSha,
    name: nameId,
  }
  const ending = { kind: 'closed', result: preview.result, pullRequest: preview.number } as const
  await comment.save(commentAfter(ending, { ...context, runUrl, repositoryUrl }))
}
