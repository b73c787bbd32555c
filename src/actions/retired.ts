// What the actions ask GitHub for a sweep: which pull requests are open, and, for each preview retired,
// what the `closed` run does on GitHub (the comment, the deployments made inactive).

import type { RetiredPreview, SweepGitHub } from '../operations/previews.ts'
import { listOpenPullRequests, readPullRequestState } from '../operations/github-client.ts'
import { actionsLogger } from './action.ts'
import { stickyComment } from './comment.ts'
import type { RunEvent } from './event.ts'
import { actionsGitHub, retireDeployments } from './github.ts'
import { previewKey } from './preview.ts'
import { commentAfter } from './preview-record.ts'

interface SweepGitHubOptions {
  token: string
  event: RunEvent & { repository: string }
  connection: { apiUrl: string; gameId: string }
}

export function actionsSweepGitHub(options: SweepGitHubOptions): SweepGitHub {
  const { token, event } = options
  const { repository } = event
  return {
    pullRequest: (number, signal) =>
      readPullRequestState(actionsGitHub({ token, repository, signal }), number),
    openPullRequests: (signal) => listOpenPullRequests(actionsGitHub({ token, repository, signal })),
    async retired(preview) {
      await updateComment(options, preview)
      const pullRequest = { number: preview.number, headRef: preview.pullRequest.headRef }
      await retireDeployments({ token, repository, pullRequest, logger: actionsLogger })
    },
  }
}

/** The preview's sticky comment, when it has one, says it was retired and why (as the `closed` run writes it). */
async function updateComment(options: SweepGitHubOptions, preview: RetiredPreview): Promise<void> {
  const { token, event, connection } = options
  const { number, reason, result } = preview
  const nameId = result.namespace.name_id
  // The key the deploy gave the comment of the preview it made in namespace `nameId`.
  const target = { kind: 'name', nameId } as const
  const key = previewKey({ connection, target, site: { name: '', nameGiven: false } })
  const issue = number
  const comment = stickyComment({ token, repository: event.repository, issue, key, logger: actionsLogger })
  const previous = await comment.load()
  if (!previous) {
    actionsLogger.info(`Pull request #${number} has no preview comment of ${nameId} to update`)
    return
  }
  const ending = { kind: 'closed', result, pullRequest: number, reason } as const
  const { runUrl, repositoryUrl } = event
  const commit = preview.pullRequest.headSha
  const context = { key, previous, namespaceNameId: nameId, commit, name: nameId, runUrl, repositoryUrl }
  await comment.save(commentAfter(ending, context))
}
