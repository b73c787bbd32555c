// What a preview's sticky comment says after a run: one function of how it ended, so the endings
// cannot drift apart.

import { errorMessage } from '../api/errors.ts'
import { isCancelled } from '../common/cancel.ts'
import { markdownCode, markdownText } from '../common/untrusted.ts'
import { BRING_BACK, retiredBecause, type CloseResult, type RetireReason } from '../deploy/live/close.ts'
import type { DeployResult } from '../deploy/pipeline.ts'
import { cancelledCheck, rerunText } from '../deploy/account.ts'
import { notLiveAccount } from '../deploy/live/publish-and-see.ts'
import { smokeSentence } from '../deploy/smoke/verdict.ts'
import { describeTiming } from '../deploy/live/verify.ts'
import { reviewedBytes } from '../deploy/target/reviewed.ts'
import { describeDelta, moreRow, sizeCell, sizeSummary, type SizeChange } from '../deploy/sizes.ts'
import { Input } from '../inputs/constants.ts'
import { nextState, renderComment, type PreviewState } from './preview.ts'

export type RunEnding =
  | { kind: 'deployed'; result: DeployResult }
  /** `partial` is what the deploy had done; namespaceId is the namespace it reached, if any. */
  | { kind: 'failed'; error: unknown; partial: DeployResult | undefined; namespaceId: string }
  /** Retired: its pull request closed (the default reason), too old, or past the cap. */
  | { kind: 'closed'; result: ClosedPreview; pullRequest: number; reason?: RetireReason }

type ClosedPreview = CloseResult & { namespace: NonNullable<CloseResult['namespace']> }

interface PreviewRecord {
  state: PreviewState
  /** Markdown: our own words, checked ids, and escaped text from outside. */
  status: string
}

interface RecordContext {
  key: string
  previous: PreviewState | undefined
  namespaceNameId: string | undefined
  /** The pull request's head. */
  commit: string | undefined
}

export function previewRecord(ending: RunEnding, context: RecordContext): PreviewRecord {
  switch (ending.kind) {
    case 'deployed':
      return { state: stateAfter(ending.result, context), status: deployedStatus(ending.result) }
    case 'failed':
      return failedRecord(ending, context)
    case 'closed':
      return closedRecord(ending, context)
  }
}

export function commentAfter(
  ending: RunEnding,
  context: RecordContext & { name: string; runUrl?: string; repositoryUrl?: string },
): string {
  return renderComment({
    ...context,
    ...previewRecord(ending, context),
    title: `gamehost preview: ${context.name}`,
  })
}

function deployedStatus(result: DeployResult): string {
  const sizes = result.sizes ? `\n\n${sizeMarkdown(result.sizes)}` : ''
  return `${deployedSentence(result)}${sizes}`
}

function deployedSentence(result: DeployResult): string {
  if (result.older?.blocked) return `⏸️ Not published: ${markdownText(result.older.reason)}.`
  const live = result.published ? ` ${liveSentence(result)}` : ''
  // A build that drew warnings (a Godot threads export that cannot start) gets no bare tick.
  const warnings = result.serving?.warnings ?? []
  const mark = warnings.length ? '⚠️' : '✅'
  const said = result.skipped
    ? `${mark} No change since the last preview: site ${markdownCode(result.siteId ?? '')} still holds these files.${live}`
    : result.siteId && result.reviewed && 'reusedFrom' in result.reviewed
      ? `${mark} Published site ${markdownCode(result.siteId)}: ${markdownText(reviewedBytes(result.reviewed))}, 0 bytes uploaded.${live}`
      : result.siteId
        ? `${mark} Deployed site ${markdownCode(result.siteId)}.${live}`
        : `${mark} Provisioned.`
  if (!warnings.length) return said
  const heading = warnings.length === 1 ? 'A warning' : `${warnings.length} warnings`
  return [said, '', `${heading} (${Input.FailOnWarning}: true makes them fail the run):`, '']
    .concat(warnings.map((warning) => `- ${markdownText(warning)}`))
    .join('\n')
}

function liveSentence(result: DeployResult): string {
  const seen = result.verification
  if (!seen) return `It is published at the preview link below (not checked: ${Input.Verify} is false).`
  if (seen.cancelled)
    return `🛑 It is published at the preview link below (${markdownText(cancelledCheck(seen, result.published))}).`
  if (seen.verified)
    return `It is live at the preview link below: seen there after ${describeTiming(seen)}, ${seen.checked.length} files matching the build.${smokeMarkdown(result)}`
  return `⚠️ It was not seen live: ${markdownText(notLiveAccount(seen))}.`
}

function smokeMarkdown(result: DeployResult): string {
  const { smoke } = result
  if (!smoke) return ''
  const mark = smoke.status === 'passed' ? '🎮' : smoke.status === 'failed' ? '⚠️' : 'ℹ️'
  return `\n\n${mark} Smoke test: ${markdownText(smokeSentence(smoke))}.`
}

type Ending<K extends RunEnding['kind']> = Extract<RunEnding, { kind: K }>

function failedRecord(
  { error, partial, namespaceId }: Ending<'failed'>,
  context: RecordContext,
): PreviewRecord {
  // A site whose upload completed is remembered, so that a re-run publishes it without uploading again.
  const state = partial?.uploadCompleted
    ? stateAfter(partial, context)
    : nextState(context.key, context.previous, { namespaceId, namespaceNameId: context.namespaceNameId })
  const checking = partial?.verification?.cancelled
    ? ` while its build was checked: ${markdownText(cancelledCheck(partial.verification, partial.published))}.`
    : ' before the deploy finished.'
  const status = isCancelled(error)
    ? `🛑 ${errorMessage(error)}${checking} ${rerunText(partial, error)}`
    : `❌ The deploy failed: ${markdownText(errorMessage(error))}`
  return { state, status }
}

function closedRecord(
  { result, pullRequest, reason }: Ending<'closed'>,
  context: RecordContext,
): PreviewRecord {
  const state = nextState(context.key, context.previous, {
    namespaceId: result.namespace.namespace_id,
    namespaceNameId: result.namespace.name_id,
  })
  for (const field of ['domain', 'domainStatus', 'cnameTarget'] as const) delete state[field]
  if (result.url && result.versionId) Object.assign(state, { url: result.url, versionId: result.versionId })
  const freed = result.domainRemoved ? `, and ${markdownText(result.domainRemoved)} was freed` : ''
  const status =
    !reason || reason.kind === 'closed'
      ? `🔒 Pull request #${pullRequest} was closed: the preview no longer serves its build${freed}.`
      : `🔒 The preview was retired: ${markdownText(retiredBecause(reason, pullRequest))}. It no longer serves its build${freed}. ${BRING_BACK}`
  return { state, status }
}

function stateAfter(result: DeployResult, context: RecordContext): PreviewState {
  const { manifest } = result
  return nextState(context.key, context.previous, {
    namespaceId: result.provisioned.namespaceId,
    namespaceNameId: context.namespaceNameId,
    domain: result.provisioned.domain,
    // A version put back is not this run's: the preview shows what the namespace serves.
    published:
      result.published && !result.verification?.rolledBackTo && !result.smoke?.rolledBackTo
        ? {
            versionId: result.published.versionId,
            url: result.published.url,
            domainStatus: result.published.domain?.status,
            cnameTarget: result.published.domain?.cnameTarget,
            privateUser: result.published.privateUser,
          }
        : undefined,
    completed:
      result.siteId && manifest && !result.skipped && result.uploadCompleted
        ? {
            siteId: result.siteId,
            uploadId: result.uploadId,
            siteName: result.siteName,
            digest: manifest.digest,
            fileCount: manifest.fileCount,
            totalBytes: manifest.totalBytes,
            commit: context.commit,
          }
        : undefined,
  })
}

/** The file names come from the builds (a fork's among them): shown as code. */
export function sizeMarkdown(change: SizeChange): string {
  const commit = change.baseCommit ? ` (${markdownCode(change.baseCommit.slice(0, 7))})` : ''
  const lines = [
    `**Size** compared with ${markdownCode(change.base)}${commit}: ${markdownText(sizeSummary(change))}`,
  ]
  if (change.rows.length) {
    lines.push('', '| File | Before | After | Change |', '| --- | ---: | ---: | ---: |')
    for (const row of change.rows) {
      const cells = [sizeCell(row.before), sizeCell(row.after), describeDelta(row.before, row.after)]
      lines.push(`| ${markdownCode(row.path)} | ${cells.map(markdownText).join(' | ')} |`)
    }
    const more = moreRow(change)
    if (more) lines.push(`| ${markdownText(more.files)} | | | ${markdownText(more.change)} |`)
  }
  return lines.join('\n')
}
