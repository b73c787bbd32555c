// Entry of the sweep action (sweep/action.yml): exports run(), which the bundle's index (dist/sweep/index.js,
// made by scripts/package.ts) calls. Nothing runs at import, so `@github/local-action` can run it too.
// GitHub is asked here: whether each pull request is open, and, for each preview retired, what the
// `closed` run does on GitHub (the sticky comment, the deployments made inactive).
import { UsageError } from '../api/errors.ts'
import { sweepOperation, type RetiredPreview } from '../operations/sweep.ts'
import { actionsLogger, operationAction } from './action.ts'
import { stickyComment } from './comment.ts'
import { readEvent, type RunEvent } from './event.ts'
import { readPullRequestState } from '../operations/github-client.ts'
import { actionsGitHub, retireDeployments } from './github.ts'
import { previewKey } from './preview.ts'
import { commentAfter } from './preview-record.ts'

export const run = operationAction(
  sweepOperation((inputs) => {
    const event = readEvent(process.env, undefined)
    const { repository } = event
    if (!repository) {
      throw new UsageError(
        'GITHUB_REPOSITORY is not set: the sweep asks GitHub about the pull requests of the repository it runs in',
      )
    }
    const token = inputs.githubToken
    return {
      pullRequest: (number, signal) =>
        readPullRequestState(actionsGitHub({ token, repository, signal }), number),
      async retired(preview) {
        await updateComment(token, { ...event, repository }, inputs, preview)
        const pullRequest = { number: preview.number, headRef: preview.pullRequest.headRef }
        await retireDeployments({ token, repository, pullRequest, logger: actionsLogger })
      },
    }
  }),
)

/** The preview's sticky comment, when it has one, says the pull request was closed (as the `closed` run writes it). */
async function updateComment(
  token: string,
  event: RunEvent & { repository: string },
  connection: { apiUrl: string; gameId: string },
  preview: RetiredPreview,
): Promise<void> {
  const nameId = preview.result.namespace.name_id
  // The key the deploy gave the comment of the preview it made in namespace `nameId`.
  const target = { kind: 'name', nameId } as const
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
  const ending = { kind: 'closed', result: preview.result, pullRequest: preview.number } as const
  const { runUrl, repositoryUrl } = event
  const commit = preview.pullRequest.headSha
  await comment.save(
    commentAfter(ending, {
      key,
      previous,
      namespaceNameId: nameId,
      commit,
      name: nameId,
      runUrl,
      repositoryUrl,
    }),
  )
}
