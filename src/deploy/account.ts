// What a deploy reports, for the action (outputs, job summary) and the CLI (--json, text) alike.

import { NetworkError, ServiceError, UsageError, ValidationFailedError, errorMessage } from '../api/errors.ts'
import { isCancelled } from '../common/cancel.ts'
import { Input, Output } from '../inputs/constants.ts'
import { NotLiveError, notLiveAccount } from './live/publish-and-see.ts'
import { describeChecked, describeTiming } from './live/verify.ts'
import { privateNote } from './target/private.ts'
import { SmokeTestError, smokeRerun, smokeSentence } from './smoke/verdict.ts'
import { describeDelta, moreRow, sizeCell, sizeSummary } from './sizes.ts'
import type { CloseResult } from './live/close.ts'
import type { DeployResult } from './pipeline.ts'
import type { Manifest } from './collect/files.ts'
import type { Published } from './live/prepare.ts'
import type { Verification } from './live/verify.ts'
import { describeVersion } from './live/meanwhile.ts'
import { capital, formatBytes, formatSeconds, plural } from '../common/format.ts'
import { reviewedBytes } from './target/reviewed.ts'
import { hiddenLeftOut } from './collect/walk.ts'
import {
  heading,
  keyValueTable,
  table,
  text,
  type Cell,
  type Inline,
  type OutputValue,
  type Report,
  type ReportBlock,
} from '../common/report.ts'
import { inputList, inputName } from '../common/input-naming.ts'

/** Null for what this run did not produce; a site whose upload was never completed has no ids. */
export function deployOutputs(result: DeployResult): Record<string, OutputValue> {
  const done = result.uploadCompleted
  return {
    [Output.SiteId]: (done && result.siteId) || null,
    [Output.UploadId]: (done && result.uploadId) || null,
    [Output.NamespaceId]: result.provisioned.namespaceId ?? null,
    [Output.FileCount]: result.manifest?.fileCount ?? result.collected?.fileCount ?? 0,
    [Output.TotalBytes]: result.manifest?.totalBytes ?? result.collected?.totalBytes ?? 0,
    [Output.Digest]: result.manifest?.digest ?? null,
    [Output.Manifest]: result.manifestPath ?? null,
    [Output.VersionId]: result.published?.versionId ?? null,
    // An older commit's run leaves the namespace on the newer build: url is where it is served.
    [Output.Url]: result.published?.url ?? result.older?.url ?? null,
    [Output.DomainStatus]: result.provisioned.domainStatus?.status ?? null,
    [Output.Skipped]: result.skipped,
    [Output.ReusedFrom]: reusedFrom(result) ?? null,
    [Output.Verified]: result.verification?.verified ?? false,
    [Output.SmokeTest]: result.smoke?.status ?? null,
    [Output.Screenshot]: result.smoke?.screenshot ?? null,
  }
}

export function deployReport(result: DeployResult): Report {
  const title = result.dryRun
    ? 'gamehost deploy plan (dry run)'
    : result.older?.blocked
      ? `gamehost deploy: ${result.older.closed ? 'closed meanwhile' : 'an older commit'}, nothing published`
      : result.skipped
        ? 'gamehost deploy: unchanged, no new site'
        : 'gamehost deploy'
  const report: Report = { title, blocks: [keyValueTable(resultRows(result, false))] }
  if (result.older?.blocked) report.blocks.unshift(text(result.older.reason))
  report.blocks.push(...sizeBlocks(result))
  const { manifest } = result
  if (manifest && manifest.fileCount > 0) report.blocks.push(...largestBlocks(manifest.files))
  report.blocks.push(...servingBlocks(result))
  return report
}

const CONTENT_TYPES_LISTED = 10
const LARGEST_LISTED = 5

function largestBlocks(files: Manifest['files']): ReportBlock[] {
  const largest = [...files].sort((a, b) => b.size - a.size).slice(0, LARGEST_LISTED)
  const rows: Cell[][] = largest.map((f) => [
    { code: f.path },
    formatBytes(f.size),
    f.contentType ?? '(none)',
  ])
  const more = files.length - largest.length
  if (more > 0) rows.push([`and ${plural(more, 'more file')}`, '', ''])
  return [heading('Largest files'), table(['File', 'Size', 'Type'], rows)]
}

function sizeBlocks(result: DeployResult): ReportBlock[] {
  const change = result.sizes
  if (!change) return []
  const commit = change.baseCommit ? ` (commit ${change.baseCommit.slice(0, 7)})` : ''
  const blocks: ReportBlock[] = [
    heading(`Size compared with ${change.base}${commit}`),
    text(sizeSummary(change)),
  ]
  if (change.rows.length) {
    const rows: Cell[][] = change.rows.map((row) => [
      { code: row.path },
      sizeCell(row.before),
      sizeCell(row.after),
      describeDelta(row.before, row.after),
    ])
    const more = moreRow(change)
    if (more) rows.push([more.files, '', '', more.change])
    blocks.push(table(['File', 'Before', 'After', 'Change'], rows))
  }
  return blocks
}

function servingBlocks(result: DeployResult): ReportBlock[] {
  const { serving } = result
  if (!serving || (!serving.builds.length && !serving.routes.length && !serving.warnings.length)) return []
  const recognised = serving.builds.map((b): [string, Cell] => ['Recognised', `${b.summary} (${b.evidence})`])
  const blocks = [heading('Web engine'), keyValueTable([['web-engine', serving.engine], ...recognised])]
  if (serving.contentTypes.length) {
    const listed = serving.contentTypes.slice(0, CONTENT_TYPES_LISTED)
    blocks.push(
      table(
        ['File', 'Content type set'],
        listed.map((c) => [{ code: c.path }, c.contentType]),
      ),
    )
    const more = serving.contentTypes.length - listed.length
    if (more > 0) blocks.push(text(`and ${more} more`))
  }
  if (serving.routes.length) {
    blocks.push(
      heading(
        result.published
          ? 'Routes of the published version'
          : result.dryRun
            ? 'Routes the published version would have'
            : 'Routes (not set: no version was published)',
      ),
      table(
        ['Glob', 'Header', 'Priority', 'From'],
        serving.routes.map((route) => [
          { code: route.glob },
          { code: `${route.header.name}: ${route.header.value}` },
          String(route.priority),
          route.from,
        ]),
      ),
    )
  }
  for (const warning of serving.warnings) blocks.push(text(`Warning: ${warning}`))
  return blocks
}

export function failureReport(error: unknown, result: DeployResult | undefined): Report {
  const cancelled = isCancelled(error)
  const blocks = [
    text(
      !cancelled
        ? `Failed: ${errorMessage(error)}`
        : result?.verification?.cancelled
          ? `${errorMessage(error)} while the host was checked: the build was published; ${cancelledCheck(result.verification, result.published)}.`
          : `${errorMessage(error)}: nothing new was started, the requests in flight were aborted, and the upload was not completed.`,
    ),
    heading('Done before it'),
  ]
  if (result) blocks.push(keyValueTable(resultRows(result, true)))
  else blocks.push(text('Nothing: it stopped before anything was sent to the service.'))
  blocks.push(heading('A re-run'), text(rerunText(result, error)))
  return { title: cancelled ? 'gamehost deploy cancelled' : 'gamehost deploy failed', blocks }
}

export function rerunText(result: DeployResult | undefined, error?: unknown): string {
  const sentences: string[] = []
  const namespaceId = result?.provisioned.namespaceId
  if (namespaceId) {
    const name = result?.provisioned.nameId ? `${result.provisioned.nameId} ` : ''
    sentences.push(
      `Namespace ${name}(${namespaceId}) stays as it is; a re-run reuses it (the ${Output.NamespaceId} output holds its id).`,
    )
  }
  if (result?.siteId && !result.skipped && !result.uploadCompleted) {
    sentences.push(
      `Site ${result.siteId} was created but its upload was never completed, so it serves nothing and nothing ` +
        'points at it; a re-run creates a new site and uploads every file.',
    )
  }
  if (result?.siteId && result.uploadCompleted && !result.published && result.provisioned.nameId) {
    sentences.push(
      `Site ${result.siteId} holds every file but was not published: the namespace still serves what it served before. ` +
        'A re-run of this preview publishes it without uploading again; any other re-run uploads the files again.',
    )
  }
  if (error instanceof NotLiveError) sentences.push(notLiveRerun(error.verification))
  if (error instanceof SmokeTestError) sentences.push(smokeRerun(error.smoke))
  const fix = inputToFix(error)
  if (fix) sentences.push(fix)
  else if (sentences.length === 0) sentences.push('A re-run starts over: nothing this run did is in its way.')
  return sentences.join(' ')
}

function notLiveRerun(seen: Verification): string {
  const other = seen.mismatch?.publishedMeanwhile
  if (other) {
    return (
      `The namespace serves ${describeVersion(other)}, another run's. A re-run publishes this build over it, ` +
      `unless the commit it serves is newer than this run's (${inputName(Input.AllowOlder)}).`
    )
  }
  const now = seen.rolledBackTo
    ? `The namespace serves version ${seen.rolledBackTo} again, as before this run. `
    : ''
  if (seen.mismatch?.permanent) {
    return `${now}A re-run with the same inputs most likely fails the same way (${seen.mismatch.reason}): check ${inputName(Input.CdnDomain)} first.`
  }
  return (
    `${now}A re-run publishes this build again and checks ${seen.url} again, for up to ${inputName(Input.VerifyTimeout)} ` +
    `(${seen.durationMs >= 1000 ? `this run waited ${(seen.durationMs / 1000).toFixed(0)} s` : 'this run did not wait'}): ` +
    `a longer ${inputName(Input.VerifyTimeout)} helps only when the CDN is slow, not when it serves something else.`
  )
}

/** A failure a re-run with the same inputs would repeat. */
function inputToFix(error: unknown): string | undefined {
  if (error instanceof UsageError || error instanceof ValidationFailedError)
    return 'A re-run with the same inputs fails the same way: fix the input the error names first.'
  // Nothing at api-url ever answered: a wrong api-url far more often than an outage.
  if (error instanceof NetworkError && error.inputs.length)
    return `A re-run with the same inputs most likely fails the same way: check ${inputList(error.inputs)} first.`
  if (!(error instanceof ServiceError)) return undefined
  const { inputs } = error
  const named = inputs.length ? inputList(inputs) : undefined
  if (error.status === 500 && named)
    return `A re-run with the same inputs most likely fails the same way: check ${named} first.`
  // A refusal of the request itself (not a rate limit or a time-out) is given again to the same request.
  if (error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429) {
    return named
      ? `A re-run with the same inputs fails the same way: ${inputs.length === 1 ? 'fix' : 'check'} ${named} first.`
      : `A re-run with the same inputs fails the same way (the service refuses the request: ${error.code}): fix the input it concerns first.`
  }
  return undefined
}

function resultRows(result: DeployResult, failed: boolean): Array<[string, Cell]> {
  const rows: Array<[string, Cell]> = []
  const { provisioned, manifest, upload } = result
  if (provisioned.namespaceId) {
    const name = provisioned.nameId ? `${provisioned.nameId} ` : ''
    const how = provisioned.namespaceCreated ? 'created' : provisioned.nameId ? 'reused' : 'existing'
    rows.push(['Namespace', [name, { code: provisioned.namespaceId }, ` (${how})`]])
  } else if (provisioned.nameId) {
    rows.push(['Namespace', `${provisioned.nameId} (${result.dryRun ? 'would be created' : 'not created'})`])
  }
  if (provisioned.domain && !result.published?.domain) rows.push(['Domain', provisioned.domain])
  if (provisioned.matchmakerValidated) rows.push(['Matchmaker config', 'valid'])
  // A site without a manifest was created but never completed: its files were hashed before completion.
  if (manifest || result.siteId) rows.push(['Site', siteCell(result, failed)])
  if (manifest) {
    rows.push(['Files', `${manifest.fileCount} (${formatBytes(manifest.totalBytes)})`])
    rows.push(['Parts', String(upload?.parts ?? (reusedFrom(result) ? 0 : result.plannedParts))])
    rows.push(['Digest', { code: manifest.digest }])
  } else if (result.collected) {
    const { fileCount, totalBytes } = result.collected
    rows.push([
      'Files',
      `${fileCount} (${formatBytes(totalBytes)}) collected; ${result.siteId ? 'the upload did not finish' : 'none uploaded'}`,
    ])
  }
  if (result.reviewed) rows.push(['Reviewed build', reviewedCell(result.reviewed)])
  if (result.record)
    rows.push(['Record', [{ code: `/${result.record.path}` }, ` (${formatBytes(result.record.size)})`]])
  const leftOut = hiddenLeftOut(result.collected?.hidden ?? [])
  if (leftOut) rows.push(['Hidden', leftOut])
  const { published } = result
  if (published) {
    const version: Inline[] = [`${published.versionName} `, { code: published.versionId }]
    if (!published.created) version.push(' (already live)')
    else if (published.replacedVersionId)
      version.push(' (replaced ', { code: published.replacedVersionId }, ')')
    rows.push(['Version', version])
    const first = whereRows(published)
    if (published.privateUser) first.push(['Access', privateNote(published.privateUser)])
    first.push(['Live', liveCell(result)])
    if (result.smoke) first.push(['Smoke test', smokeSentence(result.smoke)])
    if (result.smoke?.screenshot) first.push(['Screenshot', { code: result.smoke.screenshot }])
    rows.unshift(...first)
  } else if (result.dryRun && result.provisioned.nameId !== undefined && result.manifest) {
    rows.push(['Version', 'would be made and published'])
  }
  if (upload) {
    const seconds = Math.max(upload.durationMs / 1000, 0.001)
    rows.push([
      'Upload',
      `${seconds.toFixed(1)} s, ${formatBytes(upload.bytes / seconds)}/s, ${upload.retries} retries`,
    ])
  }
  rows.push(['Duration', formatSeconds(result.durationMs)])
  return rows
}

function siteCell(result: DeployResult, failed: boolean): Cell {
  const { siteId, siteName } = result
  if (result.skipped) return [{ code: siteId ?? '' }, ' (reused: the files are unchanged)']
  const from = reusedFrom(result)
  if (from && siteId) return [{ code: siteId }, ` (reused: the site ${from} serves)`]
  if (!siteId) return `${siteName} (${result.dryRun ? 'would be created' : 'not created'})`
  return [
    `${siteName} `,
    { code: siteId },
    failed && !result.uploadCompleted ? ' (created; upload not completed)' : '',
  ]
}

/** The site the namespace serves now, and whose it is; undefined without one. */
export function siteSentence(result: DeployResult): string | undefined {
  const { siteId, reviewed } = result
  if (!siteId) return undefined
  if (reviewed && 'reusedFrom' in reviewed)
    return `Reused site ${siteId}: ${reviewedBytes(reviewed)}, 0 bytes uploaded`
  return `${result.skipped ? 'Reused' : 'Deployed'} site ${siteId} (upload ${result.uploadId ?? 'unknown'})`
}

const reusedFrom = (result: DeployResult) =>
  result.reviewed && 'reusedFrom' in result.reviewed ? result.reviewed.reusedFrom : undefined

function reviewedCell(reviewed: NonNullable<DeployResult['reviewed']>): string {
  if ('unmatched' in reviewed) return `none is this one, so the files were uploaded: ${reviewed.unmatched}`
  return `${capital(reviewedBytes(reviewed))}: 0 bytes uploaded`
}

function whereRows(published: NonNullable<DeployResult['published']>): Array<[string, Cell]> {
  const { domain, url } = published
  const host: [string, Cell] = [
    'URL',
    url ?? `unknown: the service names no CDN domain (set ${inputName(Input.CdnDomain)})`,
  ]
  if (!domain) return [host]
  if (domain.status === 'active') return [['Domain', `${domain.url} (active)`], host]
  const needs =
    domain.status === 'pending'
      ? [
          'pending: create a CNAME record ',
          { code: domain.name },
          ' → ',
          { code: domain.cnameTarget ?? "the namespace's host name" },
        ]
      : [`${domain.status}: it does not serve the build`]
  return [host, ['Domain', [`${domain.name} `, ...needs] as Inline[]]]
}

export function liveCell(result: {
  verification?: Verification | undefined
  published?: Pick<Published, 'versionId' | 'versionName'> | undefined
}): string {
  const seen = result.verification
  if (!seen) return `not checked (${inputName(Input.Verify)} is false)`
  if (seen.cancelled) return cancelledCheck(seen, result.published)
  if (seen.verified) return `seen live after ${describeTiming(seen)}: ${describeChecked(seen.checked)}`
  const back = seen.rolledBackTo ? `; the namespace was put back on version ${seen.rolledBackTo}` : ''
  return `not seen live: ${notLiveAccount(seen)}${back}`
}

export function cancelledCheck(
  seen: Pick<Verification, 'url' | 'durationMs'>,
  published: Pick<Published, 'versionId' | 'versionName'> | undefined,
): string {
  const serves = published
    ? `the namespace serves version '${published.versionName}' (${published.versionId}), published but not yet seen at ${seen.url}`
    : `not yet seen at ${seen.url}`
  return `not checked: the check was cancelled after ${formatSeconds(seen.durationMs)}; ${serves}`
}

export function skipReport(reason: string): Report {
  return { title: 'gamehost deploy skipped', blocks: [text(reason)] }
}

export function closeOutputs(result: CloseResult): Record<string, OutputValue> {
  return {
    [Output.SiteId]: result.siteId ?? null,
    [Output.UploadId]: null,
    [Output.NamespaceId]: result.namespace?.namespace_id ?? null,
    [Output.FileCount]: 0,
    [Output.TotalBytes]: 0,
    [Output.Digest]: null,
    [Output.Manifest]: null,
    [Output.VersionId]: result.versionId ?? null,
    [Output.Url]: result.url ?? null,
    [Output.DomainStatus]: null,
    [Output.Skipped]: false,
    [Output.ReusedFrom]: null,
    [Output.Verified]: false,
    [Output.SmokeTest]: null,
    [Output.Screenshot]: null,
  }
}

export function closeReport(result: CloseResult): Report {
  const { namespace } = result
  if (!namespace) {
    return {
      title: 'gamehost preview closed',
      blocks: [
        text('The game has no namespace of this preview: it was never deployed, and nothing was changed.'),
      ],
    }
  }
  const rows: Array<[string, Cell]> = [
    ['Namespace', [`${namespace.name_id} `, { code: namespace.namespace_id }]],
    [
      'Serves',
      result.alreadyClosed
        ? 'the closed page already (nothing was changed)'
        : ['a page saying the preview was closed: version ', { code: result.versionId ?? '' }],
    ],
  ]
  if (result.url) rows.push(['URL', result.url])
  if (result.domainRemoved) rows.push(['Domain', `${result.domainRemoved} removed: it is free again`])
  return { title: 'gamehost preview closed', blocks: [keyValueTable(rows)] }
}
