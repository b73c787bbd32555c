// What GitHub holds has limits: a comment of at most 65,536 characters, a job summary of at most 1 MiB.
// The sticky comment and the job summary stay under them whatever they say (the rest is left out,
// said so), and the tables a build's size makes long (thousands of files) are cut with an "and N more"
// row.
import assert from 'node:assert/strict'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { writeReport } from '../../src/actions/action.ts'
import { commentAfter, sizeMarkdown } from '../../src/actions/preview-record.ts'
import { previewMarker, readState, renderComment } from '../../src/actions/preview.ts'
import { heading, table, text, type ReportBlock } from '../../src/common/report.ts'
import { deployReport } from '../../src/deploy/account.ts'
import { buildManifest, type ArtifactFile } from '../../src/deploy/collect/files.ts'
import type { SiteRecord } from '../../src/deploy/collect/record.ts'
import type { DeployResult } from '../../src/deploy/pipeline.ts'
import { compareSizes } from '../../src/deploy/sizes.ts'

const COMMENT_MAX = 65_536
const SUMMARY_MAX_BYTES = 1024 * 1024
const KEY = 'namespace:pr-7 game:4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86 api:https://api.example.com'
const state = { key: KEY, siteId: 'site-1', digest: 'sha256:abc', fileCount: 3, totalBytes: 30 }

/** The comment as GitHub gets it: the marker, then the body. */
const posted = (body: string) => `${previewMarker(KEY)}\n${body}`

describe('the sticky comment stays under 65,536 characters', () => {
  test('a status of many lines: the lines that fit, the rest said left out, the state kept last', () => {
    const status = Array.from({ length: 5000 }, (_, i) => `- line ${i} ${'y'.repeat(40)}`).join('\n')
    const body = posted(renderComment({ title: 'gamehost preview: pr-7', status, state }))
    assert.ok(body.length < COMMENT_MAX, `the comment is ${body.length} characters`)
    assert.ok(body.length > 50_000, 'most of it shown')
    assert.ok(body.includes('\n- line 0 '), 'from the start')
    assert.match(body, /left out: a comment holds at most 65,536 characters/)
    assert.deepEqual(readState(body, KEY), state)
  })

  test('a failure whose message is one line of 3 MB: the comment says so, under the limit', () => {
    const error = new Error(`the service said: ${'<b>@team</b> '.repeat(250_000)}`)
    const body = posted(
      commentAfter(
        { kind: 'failed', error, partial: undefined, namespaceId: 'ns-7' },
        { key: KEY, previous: state, namespaceNameId: 'pr-7', commit: undefined, name: 'pr-7' },
      ),
    )
    assert.ok(body.length < COMMENT_MAX, `the comment is ${body.length} characters`)
    assert.match(body, /left out: a comment holds at most 65,536 characters/)
    assert.ok(!body.includes('<b>'), 'nothing of it read as HTML')
    assert.equal(readState(body, KEY)?.siteId, 'site-1')
  })
})

describe('the job summary stays under 1 MiB', () => {
  let file: string
  before(async () => {
    file = path.join(await mkdtemp(path.join(os.tmpdir(), 'gamehost-summary-')), 'summary.md')
    process.env.GITHUB_STEP_SUMMARY = file
  })
  after(() => delete process.env.GITHUB_STEP_SUMMARY)

  async function summaryOf(blocks: ReportBlock[]): Promise<string> {
    await writeFile(file, '')
    await writeReport({ title: 'gamehost deploy', blocks })
    return readFile(file, 'utf8')
  }

  test('3 MB of blocks: the blocks that fit, then a line saying how many were left out', async () => {
    const blocks = Array.from({ length: 3000 }, (_, i) => text(`block ${i} ${'z'.repeat(1000)}`))
    const summary = await summaryOf([heading('Smoke test'), ...blocks])
    assert.ok(Buffer.byteLength(summary) < SUMMARY_MAX_BYTES, `${Buffer.byteLength(summary)} bytes`)
    assert.ok(summary.startsWith('<h2>gamehost deploy</h2>'), summary.slice(0, 100))
    assert.ok(summary.includes('<p>block 0 '))
    assert.match(
      summary,
      /<p>\d+ more parts of this summary left out: a job summary holds at most 1 MiB\.<\/p>\n?$/,
    )
  })

  test('one block of 3 MB is left out whole, never cut inside its HTML', async () => {
    const summary = await summaryOf([
      text('before'),
      table(['File'], [['x'.repeat(3_000_000)]]),
      text('after'),
    ])
    assert.ok(Buffer.byteLength(summary) < SUMMARY_MAX_BYTES, `${Buffer.byteLength(summary)} bytes`)
    assert.ok(summary.includes('<p>before</p>'))
    assert.match(summary, /<p>2 more parts of this summary left out/)
  })
})

describe('a size change of thousands of files: tables cut with an "and N more" row', () => {
  const file = (path: string, size: number): ArtifactFile => ({
    path,
    absolutePath: `/b/${path}`,
    size,
    mtimeMs: 0,
    dev: 1,
    ino: 1,
  })
  const paths = Array.from({ length: 3000 }, (_, i) => `assets/${i}.png`)
  const files = paths.map((p, i) => file(p, 1000 + i))
  const manifest = buildManifest(
    files,
    files.map(() => '0'.repeat(64)),
  )
  const record: SiteRecord = {
    format: 1,
    commit: 'c'.repeat(40),
    digest: 'sha256:x',
    fileCount: paths.length,
    totalBytes: paths.length * 900,
    files: paths.map((path) => ({ path, size: 900, sha256: '0'.repeat(64) })),
  }
  const change = compareSizes('prod', record, manifest)

  test('the comment: 15 rows, then a row for the 2,985 others, the whole under the limit', () => {
    const markdown = sizeMarkdown(change)
    assert.ok(markdown.length < 5000, `${markdown.length} characters`)
    const rows = markdown.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| ---'))
    assert.equal(rows.length, 1 + 15 + 1, 'the header, 15 files, the row of the others')
    assert.match(rows.at(-1)!, /^\| and 2985 more files changed \| \| \| \\\+\d+\\\.\d [KM]iB in all \|$/)
  })

  test('the summary: the size table and the largest files, each with its "and N more" row', () => {
    const result = {
      dryRun: false,
      skipped: false,
      siteName: 's',
      provisioned: { namespaceCreated: false, matchmakerValidated: false },
      manifest,
      uploadCompleted: true,
      plannedParts: 1,
      durationMs: 1,
      sizes: change,
    } as unknown as DeployResult
    const tables = deployReport(result).blocks.flatMap((b) => (b.kind === 'table' ? [b.table] : []))
    const sizes = tables.find((t) => t.header.includes('Before'))!
    assert.equal(sizes.rows.length, 16)
    assert.equal(sizes.rows.at(-1)![0], 'and 2985 more files changed')
    const largest = tables.find((t) => t.header.includes('Type'))!
    assert.equal(largest.rows.length, 6)
    assert.deepEqual(largest.rows.at(-1), ['and 2995 more files', '', ''])
  })
})
