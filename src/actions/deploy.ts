import os from 'node:os'
import * as core from '@actions/core'
import { actionsLogger, notice, runAction, writeOutputsAndReport } from './action.ts'
import { closePreview } from '../deploy/live/close.ts'
import {
  closeOutputs,
  closeReport,
  deployOutputs,
  deployReport,
  failureReport,
  rerunText,
  siteSentence,
  skipReport,
} from '../deploy/account.ts'
import { UsageError, errorMessage } from '../api/errors.ts'
import { stickyComment, type StickyComment } from './comment.ts'
import { cancelOnSignals, cancelSignals, isCancelled } from '../common/cancel.ts'
import { ActionName, Input, Output } from '../inputs/constants.ts'
import { secretInputs } from '../inputs/table.ts'
import { masked } from '../common/secrets.ts'
import { CANCELLED_COMMENT_MS } from '../common/timeouts.ts'
import { deadlineFromEnv } from '../operations/operation.ts'
import { deploy, deployFailure, type DeployResult } from '../deploy/pipeline.ts'
import { checkPullRequestRead, readEvent, readEventFile, whenNoToken, type RunEvent } from './event.ts'
import {
  hasTarget,
  missingTokenError,
  readInputs,
  readPullRequestNumber,
  targetNameId,
  type DeployInputs,
} from '../inputs/deploy.ts'
import { checkPullRequest, githubCompareCommits, retireDeployments } from './github.ts'
import { previewKey, type PreviewState } from './preview.ts'
import { commentAfter, type RunEnding } from './preview-record.ts'
import {
  makeRoomForPreview,
  previewOfDeploy,
  sweepOtherPreviews,
  type DeploySweep,
} from '../operations/preview-sweep.ts'
import { actionsSweepGitHub } from './retired.ts'

export async function run(): Promise<void> {
  await runAction(
    secretInputs(ActionName.Deploy),
    async () => {
      const eventFile = readEventFile(process.env)
      const event = readEvent(process.env, eventFile.payload, readPullRequestNumber(getInput))
      checkPullRequestRead(event, process.env, eventFile.problem)
      const inputs = readActionInputs(event)
      const githubToken = getInput(Input.GitHubToken)
      if (event.pullRequest?.build && event.repository) {
        const { number, build } = event.pullRequest
        await checkPullRequest({ token: githubToken, repository: event.repository, number, build })
      }
      if (!inputs.connection.token && !inputs.dryRun) return skipWithoutToken(inputs, event)

      // GitHub cancels with SIGINT, then SIGTERM.
      const cancellation = cancelOnSignals(cancelSignals())
      try {
        const key = previewKey(inputs)
        const comment = previewComment(inputs, event, key, githubToken)
        const preview = { inputs, event, key, comment, githubToken }
        if (event.pullRequest?.closed) await closeRun(preview, cancellation.signal)
        else await deployRun(preview, cancellation.signal)
      } finally {
        cancellation.dispose()
      }
    },
    (error) => failureReport(error, undefined),
  )
}

const getInput = (name: string) => core.getInput(name)

function readActionInputs(event: RunEvent): DeployInputs {
  const inputs = readInputs(
    getInput,
    {
      repository: process.env.GITHUB_REPOSITORY,
      ref: event.ref,
      sha: event.pullRequest?.headSha ?? process.env.GITHUB_SHA,
    },
    // A closed pull request's preview is closed (closeRun): it needs a namespace, not a path.
    { closing: event.pullRequest?.closed === true },
  )
  const { token } = inputs.connection
  actionsLogger.debug(
    `Inputs: ${JSON.stringify({ ...inputs, connection: { ...inputs.connection, token: masked(token) } })}`,
  )
  return inputs
}

/** No token: skip the deploy (a fork's pull request, or if-no-token: skip), or fail. */
async function skipWithoutToken(inputs: DeployInputs, event: RunEvent): Promise<void> {
  const decision = whenNoToken(inputs.ifNoToken, event)
  if (!decision.skip) throw missingTokenError()
  actionsLogger.warning(decision.reason, { title: 'Deploy skipped' })
  const outputs = Object.fromEntries(Object.values(Output).map((name) => [name, '']))
  outputs[Output.Skipped] = 'true'
  const refused = await writeOutputsAndReport(outputs, skipReport(decision.reason))
  if (refused) throw refused
}

interface Preview {
  inputs: DeployInputs
  event: RunEvent
  key: string
  comment: StickyComment | undefined
  githubToken: string
}

async function deployRun(preview: Preview, signal: AbortSignal): Promise<void> {
  const { inputs, comment, event, githubToken } = preview
  let namespaceId: string | undefined
  let result: DeployResult
  let previous: PreviewState | undefined
  const sweep = previewSweep(preview, signal)
  try {
    previous = await comment?.load()
    signal.throwIfAborted()
    result = await deploy(inputs, {
      deadlineMs: deadlineFromEnv(process.env),
      logger: actionsLogger,
      tempDir: process.env.RUNNER_TEMP || os.tmpdir(),
      previous,
      onNamespace: (id) => (namespaceId = id),
      signal,
      beforeCreating: sweep && (() => makeRoomForPreview(sweep)),
      source: { commit: event.pullRequest?.headSha ?? process.env.GITHUB_SHA, ref: event.ref },
      // The guard against an older build asks GitHub; without a token or repository it cannot.
      compareCommits:
        githubToken && event.repository
          ? githubCompareCommits({ token: githubToken, repository: event.repository })
          : undefined,
    })
  } catch (thrown) {
    return reportFailure(preview, previous, namespaceId, thrown)
  }
  const refused = await writeOutputsAndReport(deployOutputs(result), deployReport(result))
  const said = siteSentence(result)
  if (said) actionsLogger.info(said)
  const url = result.published?.url
  if (url && result.verification?.verified) notice(`Live at ${url}`, { title: 'Deployed' })
  else if (url && !result.verification)
    notice(`Published at ${url} (not checked: ${Input.Verify} is false)`, { title: 'Deployed' })
  await saveComment(preview, { kind: 'deployed', result }, previous)
  if (sweep && !signal.aborted) await sweepOtherPreviews(sweep)
  if (refused) throw refused
}

/** On a pull request's run that deploys its preview: the sweep of the other previews, with GitHub's help. */
function previewSweep(preview: Preview, signal: AbortSignal): DeploySweep | undefined {
  const { inputs, event, githubToken } = preview
  const pullRequest = event.pullRequest && previewOfDeploy(inputs, event.pullRequest.number)
  if (pullRequest === undefined) return undefined
  const { repository } = event
  const github =
    githubToken && repository
      ? actionsSweepGitHub({
          token: githubToken,
          event: { ...event, repository },
          connection: inputs.connection,
        })
      : undefined
  return { inputs, pullRequest, github, logger: actionsLogger, signal }
}

/** The outputs known so far (a created namespace above all), the summary, the comment. */
async function reportFailure(
  preview: Preview,
  previous: PreviewState | undefined,
  namespaceId: string | undefined,
  thrown: unknown,
): Promise<never> {
  const { error, partial } = deployFailure(thrown)
  const outputs = partial ? deployOutputs(partial) : namespaceId ? { [Output.NamespaceId]: namespaceId } : {}
  actionsLogger.info(
    `${isCancelled(error) ? errorMessage(error) : 'The deploy failed'}. ${rerunText(partial, error)}`,
  )
  const refused = await writeOutputsAndReport(outputs, failureReport(error, partial))
  if (refused) actionsLogger.error(refused.message)
  // Show the namespace even so (the next run finds it through the service, not through this).
  const withinMs = isCancelled(error) ? CANCELLED_COMMENT_MS : undefined
  if (namespaceId)
    await saveComment(preview, { kind: 'failed', error, partial, namespaceId }, previous, withinMs)
  throw error
}

/** The closed page, the domain freed, the comment, the GitHub deployments made inactive where the token may. */
async function closeRun(preview: Preview, signal: AbortSignal): Promise<void> {
  const { inputs, event, comment, githubToken } = preview
  const pullRequest = event.pullRequest!
  if (!hasTarget(inputs)) {
    throw new UsageError(
      `${Input.Namespace} is empty: pull request #${pullRequest.number} was closed, and its preview is found by ` +
        `the ${Input.Namespace} (or ${Input.NamespaceId}) it was deployed to: give the same one as the deploy`,
    )
  }
  const previous = await comment?.load()
  const result = await closePreview(inputs, {
    deadlineMs: deadlineFromEnv(process.env),
    logger: actionsLogger,
    pullRequest: pullRequest.number,
    signal,
  })
  const refused = await writeOutputsAndReport(closeOutputs(result), closeReport(result))
  const { namespace } = result
  if (namespace)
    await saveComment(
      preview,
      { kind: 'closed', result: { ...result, namespace }, pullRequest: pullRequest.number },
      previous,
    )
  const { repository } = event
  if (githubToken && repository)
    await retireDeployments({ token: githubToken, repository, pullRequest, logger: actionsLogger })
  if (refused) throw refused
}

function previewComment(
  inputs: DeployInputs,
  event: RunEvent,
  key: string,
  token: string,
): StickyComment | undefined {
  if (!inputs.comment || inputs.dryRun || !event.pullRequest || !event.repository) return undefined
  if (!token) {
    actionsLogger.warning('No github-token: the preview comment is skipped.')
    return undefined
  }
  const { repository, pullRequest } = event
  return stickyComment({ token, repository, issue: pullRequest.number, key, logger: actionsLogger })
}

async function saveComment(
  { inputs, event, key, comment }: Preview,
  ending: RunEnding,
  previous: PreviewState | undefined,
  withinMs?: number,
): Promise<void> {
  if (!comment) return
  const { target } = inputs
  const namespaceNameId = targetNameId(target)
  const name = namespaceNameId ?? (target.kind === 'id' ? target.namespaceId : inputs.site.name)
  const { runUrl, repositoryUrl } = event
  const commit = event.pullRequest?.headSha
  const context = { key, previous, namespaceNameId, commit, name, runUrl, repositoryUrl }
  await comment.save(commentAfter(ending, context), { withinMs })
}
