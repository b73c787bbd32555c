// A page that says too much, in the machine's Chrome or Chromium: one console.error of 3 MB, and a page
// that prints without end while it is watched. The smoke test's warning line, the job summary and the
// pull request's comment each stay small, the account still says how many errors there were, and the
// watch keeps only the first few. Served from 127.0.0.1; without a browser, skipped.
import assert from 'node:assert/strict'
import { readFile, writeFile } from 'node:fs/promises'
import type { Server } from 'node:http'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { writeReport } from '../../src/actions/action.ts'
import { commentAfter } from '../../src/actions/preview-record.ts'
import { deployReport } from '../../src/deploy/account.ts'
import type { Published } from '../../src/deploy/live/prepare.ts'
import { findBrowser } from '../../src/deploy/smoke/browser.ts'
import type { SmokeResult } from '../../src/deploy/smoke/index.ts'
import { deployResult } from '../support/deploy-result.ts'
import { tempDir } from '../support/helpers.ts'
import { CANVAS, servePages, smokeOf } from '../support/smoke-page.ts'

const browser = findBrowser({ env: process.env, platform: process.platform })
const noBrowser = 'missing' in browser ? browser.missing : undefined
const browserPath = (browser as { path: string }).path

/** A warning line, in characters: a few hundred of the page's, and our own words around them. */
const LOG_LINE_MAX = 2000
/** GitHub refuses a job summary over 1 MiB, and a comment over 65,536 characters. */
const SUMMARY_MAX_BYTES = 1024 * 1024
const COMMENT_MAX = 65_536

const PAGES: Record<string, string> = {
  '/loud/': `<!DOCTYPE html><body>${CANVAS}<script>console.error('E'.repeat(3 * 1024 * 1024))</script></body>`,
  '/endless/': `<!DOCTYPE html><body>${CANVAS}<script>
let printed = 0
setInterval(() => {
  for (let i = 0; i < 2; i++) console.error('tick ' + ++printed + ' ' + 'x'.repeat(2000))
}, 1)
</script></body>`,
}

describe('a page that says too much: the account stays bounded', { skip: noBrowser }, () => {
  let server: Server
  let origin: string
  let summaryFile: string
  before(async () => {
    ;({ server, origin } = await servePages(PAGES))
    summaryFile = path.join(await tempDir(), 'summary.md')
    process.env.GITHUB_STEP_SUMMARY = summaryFile
  })
  after(() => {
    delete process.env.GITHUB_STEP_SUMMARY
    server?.closeAllConnections()
    server?.close()
  })

  /** The smoke test of the page, on-verify-failure warn: its warning line, and what the watch kept. */
  async function smokeOfPage(page: string) {
    const { smoke, lines, seen, published } = await smokeOf(`${origin}${page}`, browserPath)
    const warning = lines.find((line) => line.startsWith('warning: Smoke test failed'))
    assert.ok(warning, lines.join('\n'))
    return { smoke, warning, seen: seen!, published }
  }

  /** The job summary and the comment of a deploy whose smoke test this was. */
  async function accountsOf(smoke: SmokeResult, published: Published) {
    const result = deployResult({
      siteId: '5c1f9e2a-8d3b-4a7c-b6e0-2f4d8a1c9e37',
      provisioned: { nameId: 'pr-1', namespaceId: 'ns-1' },
      uploadCompleted: true,
      published,
      verification: { verified: true, url: published.url!, durationMs: 2600, attempts: 3, checked: [] },
      plannedParts: 1,
      smoke,
    })
    await writeFile(summaryFile, '')
    await writeReport(deployReport(result))
    const summary = await readFile(summaryFile)
    const context = {
      key: 'k',
      previous: undefined,
      namespaceNameId: 'pr-1',
      commit: undefined,
      name: 'pr-1',
    }
    const comment = commentAfter({ kind: 'deployed', result }, context)
    return { summary, comment }
  }

  test('one console.error of 3 MB: quoted cut, its length said, in a short line, summary and comment', async () => {
    const { smoke, warning, published } = await smokeOfPage('/loud/')
    assert.equal(smoke.status, 'failed')
    assert.ok(warning.length < LOG_LINE_MAX, `the warning line is ${warning.length} characters`)
    assert.match(warning, /: 1 error, /)
    assert.match(warning, /console\.error: E{300}… \(3,145,728 characters\)/)
    const { summary, comment } = await accountsOf(smoke, published)
    assert.ok(summary.length < SUMMARY_MAX_BYTES, `the summary is ${summary.length} bytes`)
    assert.ok(summary.length < 20_000, `the summary is ${summary.length} bytes`)
    assert.match(summary.toString(), /3,145,728 characters/)
    assert.ok(comment.length < COMMENT_MAX, `the comment is ${comment.length} characters`)
    assert.ok(comment.length < 20_000, `the comment is ${comment.length} characters`)
  })

  test('a page that prints without end: every error counted, the first few kept, the account small', async () => {
    const { smoke, warning, seen, published } = await smokeOfPage('/endless/')
    const printed = Number(/: (\d+) errors, /.exec(warning)?.[1])
    assert.ok(printed > 100, `the line counts what the page printed: ${warning.slice(0, 200)}`)
    assert.ok(warning.length < LOG_LINE_MAX, `the warning line is ${warning.length} characters`)
    assert.match(warning, /first: console\.error: tick 1 x{293}… \(2,007 characters\)/)
    const problems = seen.problems
    assert.ok(problems.kept.length <= 30, `the watch kept ${problems.kept.length} problems`)
    assert.equal(problems.count(), printed)
    const { summary, comment } = await accountsOf(smoke, published)
    assert.ok(summary.length < 20_000, `the summary is ${summary.length} bytes`)
    assert.ok(comment.length < 20_000, `the comment is ${comment.length} characters`)
    assert.match(comment, new RegExp(`${printed} errors`))
  })
})
