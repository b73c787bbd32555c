import * as core from '@actions/core'
import { Output } from './constants.ts'
import type { DeployResult } from './deploy.ts'
import { formatBytes } from './format.ts'

/** The action's outputs, by name. Empty strings for what this run did not produce. */
export function outputsOf(result: DeployResult): Record<string, string> {
  return {
    [Output.SiteId]: result.siteId ?? '',
    [Output.UploadId]: result.uploadId ?? '',
    [Output.NamespaceId]: result.provisioned.namespaceId ?? '',
    [Output.FileCount]: String(result.manifest?.fileCount ?? 0),
    [Output.TotalBytes]: String(result.manifest?.totalBytes ?? 0),
    [Output.Digest]: result.manifest?.digest ?? '',
    [Output.Manifest]: result.manifestPath ?? '',
    [Output.Skipped]: String(result.skipped),
  }
}

/** The outputs of a run that deployed nothing (no token on a fork). */
export function setSkippedOutputs(): void {
  for (const name of Object.values(Output)) core.setOutput(name, name === Output.Skipped ? 'true' : '')
}

export async function writeSkipSummary(reason: string): Promise<void> {
  await core.summary.addHeading('gamehost deploy skipped', 2).addRaw(reason, true).write()
}

export function setOutputs(result: DeployResult): void {
  for (const [name, value] of Object.entries(outputsOf(result))) core.setOutput(name, value)
}

/** A table of what was provisioned and uploaded, with sizes and timing, and the largest files. */
export async function writeSummary(result: DeployResult): Promise<void> {
  const heading = result.dryRun
    ? 'gamehost deploy plan (dry run)'
    : result.skipped
      ? 'gamehost deploy: unchanged, no new site'
      : 'gamehost deploy'
  const summary = core.summary.addHeading(heading, 2)
  const rows: Array<[string, string]> = []
  const { provisioned, manifest, upload } = result
  if (provisioned.namespaceId) {
    const name = provisioned.nameId ? `${provisioned.nameId} ` : ''
    const how = provisioned.namespaceCreated ? 'created' : provisioned.nameId ? 'reused' : 'existing'
    rows.push(['Namespace', `${name}<code>${provisioned.namespaceId}</code> (${how})`])
  } else if (provisioned.nameId) {
    rows.push(['Namespace', `${provisioned.nameId} (${result.dryRun ? 'would be created' : 'not created'})`])
  }
  if (provisioned.domain) rows.push(['Domain', provisioned.domain])
  if (provisioned.matchmakerValidated) rows.push(['Matchmaker config', 'valid'])
  if (manifest) {
    const site = result.skipped
      ? `<code>${result.siteId}</code> (reused: the files are unchanged)`
      : result.siteId
        ? `${escapeHtml(result.siteName)} <code>${result.siteId}</code>`
        : `${escapeHtml(result.siteName)} (${result.dryRun ? 'would be created' : 'not created'})`
    rows.push(['Site', site])
    rows.push(['Files', `${manifest.fileCount} (${formatBytes(manifest.totalBytes)})`])
    rows.push(['Parts', String(upload?.parts ?? result.plannedParts)])
    rows.push(['Digest', `<code>${manifest.digest}</code>`])
  }
  if (upload) {
    const seconds = Math.max(upload.durationMs / 1000, 0.001)
    rows.push([
      'Upload',
      `${seconds.toFixed(1)} s, ${formatBytes(upload.bytes / seconds)}/s, ${upload.retries} retries`,
    ])
  }
  rows.push(['Duration', `${(result.durationMs / 1000).toFixed(1)} s`])
  summary.addTable([
    [
      { data: 'What', header: true },
      { data: 'Value', header: true },
    ],
    ...rows,
  ])
  if (manifest && manifest.fileCount > 0) {
    const largest = [...manifest.files].sort((a, b) => b.size - a.size).slice(0, 5)
    summary.addHeading('Largest files', 3).addTable([
      [
        { data: 'File', header: true },
        { data: 'Size', header: true },
        { data: 'Type', header: true },
      ],
      ...largest.map((f) => [
        `<code>${escapeHtml(f.path)}</code>`,
        formatBytes(f.size),
        f.contentType ?? '(none)',
      ]),
    ])
  }
  await summary.write()
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c)
}
