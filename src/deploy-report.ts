// What a deploy reports, for the action (outputs, job summary) and the CLI (--json, text) alike.

import { Output } from './constants.ts'
import type { DeployResult } from './deploy.ts'
import { formatBytes } from './format.ts'
import type { OutputValue } from './operation.ts'
import { heading, keyValueTable, table, text, type Cell, type Report } from './report-model.ts'

/** The deploy's outputs, by name: null for what this run did not produce. */
export function deployOutputs(result: DeployResult): Record<string, OutputValue> {
  return {
    [Output.SiteId]: result.siteId ?? null,
    [Output.UploadId]: result.uploadId ?? null,
    [Output.NamespaceId]: result.provisioned.namespaceId ?? null,
    [Output.FileCount]: result.manifest?.fileCount ?? 0,
    [Output.TotalBytes]: result.manifest?.totalBytes ?? 0,
    [Output.Digest]: result.manifest?.digest ?? null,
    [Output.Manifest]: result.manifestPath ?? null,
    [Output.Skipped]: result.skipped,
  }
}

/** A table of what was provisioned and uploaded, with sizes and timing, and the largest files. */
export function deployReport(result: DeployResult): Report {
  const title = result.dryRun
    ? 'gamehost deploy plan (dry run)'
    : result.skipped
      ? 'gamehost deploy: unchanged, no new site'
      : 'gamehost deploy'
  const rows: Array<[string, Cell]> = []
  const { provisioned, manifest, upload } = result
  if (provisioned.namespaceId) {
    const name = provisioned.nameId ? `${provisioned.nameId} ` : ''
    const how = provisioned.namespaceCreated ? 'created' : provisioned.nameId ? 'reused' : 'existing'
    rows.push(['Namespace', [name, { code: provisioned.namespaceId }, ` (${how})`]])
  } else if (provisioned.nameId) {
    rows.push(['Namespace', `${provisioned.nameId} (${result.dryRun ? 'would be created' : 'not created'})`])
  }
  if (provisioned.domain) rows.push(['Domain', provisioned.domain])
  if (provisioned.matchmakerValidated) rows.push(['Matchmaker config', 'valid'])
  if (manifest) {
    const site: Cell = result.skipped
      ? [{ code: result.siteId ?? '' }, ' (reused: the files are unchanged)']
      : result.siteId
        ? [`${result.siteName} `, { code: result.siteId }]
        : `${result.siteName} (${result.dryRun ? 'would be created' : 'not created'})`
    rows.push(['Site', site])
    rows.push(['Files', `${manifest.fileCount} (${formatBytes(manifest.totalBytes)})`])
    rows.push(['Parts', String(upload?.parts ?? result.plannedParts)])
    rows.push(['Digest', { code: manifest.digest }])
  }
  if (upload) {
    const seconds = Math.max(upload.durationMs / 1000, 0.001)
    rows.push([
      'Upload',
      `${seconds.toFixed(1)} s, ${formatBytes(upload.bytes / seconds)}/s, ${upload.retries} retries`,
    ])
  }
  rows.push(['Duration', `${(result.durationMs / 1000).toFixed(1)} s`])
  const report: Report = { title, blocks: [keyValueTable(rows)] }
  if (manifest && manifest.fileCount > 0) {
    const largest = [...manifest.files].sort((a, b) => b.size - a.size).slice(0, 5)
    report.blocks.push(
      heading('Largest files'),
      table(
        ['File', 'Size', 'Type'],
        largest.map((f) => [{ code: f.path }, formatBytes(f.size), f.contentType ?? '(none)']),
      ),
    )
  }
  return report
}

/** The report of a deploy skipped for want of a token. */
export function skipReport(reason: string): Report {
  return { title: 'gamehost deploy skipped', blocks: [text(reason)] }
}
