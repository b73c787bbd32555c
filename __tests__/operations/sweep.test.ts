// The sweep retires what it can prove: a namespace the prefix matches is retired only when the record
// its host serves names a ref of that pull request. A release under the same prefix (`v2` for prefix
// `v`), a preview deployed without a record, or one whose record names another pull request is
// skipped, saying why, and never touched: GitHub is not even asked about it.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { memoryLogger } from '../../src/common/logger.ts'
import { renderText } from '../../src/common/report.ts'
import { deploy } from '../../src/deploy/pipeline.ts'
import type { Emulator } from '../../src/emulator/index.ts'
import { readInputs } from '../../src/inputs/deploy.ts'
import { runOperation } from '../../src/operations/operation.ts'
import { sweepOperation, type SweepResult } from '../../src/operations/sweep.ts'
import { GAME, TOKEN } from '../support/actions.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { getter, tempDir, writeTree } from '../support/helpers.ts'

const fast = { sleep: async () => {} }

describe('the sweep retires what it can prove', () => {
  let emulator: Emulator
  let site: string
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false })
    site = await tempDir()
    await writeTree(site, { 'index.html': '<title>the game</title>', 'game.js': 'play()' })
  })
  after(() => emulator.close())

  const cdnDomain = () => emulator.url.replace('127.0.0.1', 'localhost')
  /** A deploy to `namespace` of a build of `ref`, with its record unless `site-record` says no. */
  const deployed = async (namespace: string, ref: string, extra: Record<string, string> = {}) => {
    const inputs = readInputs(
      getter({
        'api-url': emulator.url,
        token: TOKEN,
        'game-id': GAME,
        path: site,
        namespace,
        'cdn-domain': cdnDomain(),
        ...extra,
      }),
    )
    await deploy(inputs, {
      logger: memoryLogger(),
      tempDir: await tempDir(),
      retry: fast,
      source: { commit: 'abcdef0123456789abcdef0123456789abcdef01', ref },
    })
  }
  const versionOf = (nameId: string) => emulator.namespaces(GAME).find((n) => n.nameId === nameId)!.versionId

  /** A sweep whose GitHub says every pull request is closed, and which numbers it was asked about. */
  const sweep = async (inputs: Record<string, string>) => {
    const asked: number[] = []
    const operation = sweepOperation(() => ({
      pullRequest: async (number) => {
        asked.push(number)
        return { open: false }
      },
    }))
    const read = operation.read(
      getter({ 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, 'github-token': 'gh', ...inputs }),
    )
    const logger = memoryLogger()
    const result: SweepResult = await runOperation(operation, read, { logger, retry: fast })
    return { result, asked, logger, report: renderText(operation.report(result, read)) }
  }

  test('a prefix that matches a release skips it, saying why; the proven preview is retired', async () => {
    await deployed('v2', 'refs/tags/v2')
    await deployed('v3', 'refs/pull/3/merge')
    await deployed('v4', 'refs/pull/4/merge', { 'site-record': 'false' })
    await deployed('v5', 'refs/pull/6/merge')
    const kept = { v2: versionOf('v2'), v4: versionOf('v4'), v5: versionOf('v5') }
    const v3 = versionOf('v3')

    const { result, asked, logger, report } = await sweep({
      'namespace-prefix': 'v',
      'cdn-domain': cdnDomain(),
    })

    const byName = Object.fromEntries(result.previews.map((p) => [p.namespace, p]))
    assert.deepEqual(Object.fromEntries(result.previews.map((p) => [p.namespace, p.outcome])), {
      v2: 'skipped',
      v3: 'retired',
      v4: 'skipped',
      v5: 'skipped',
    })
    const host = (name: string) => `http://demo-game--${name}.localhost:${new URL(emulator.url).port}/`
    assert.equal(
      byName.v2!.reason,
      'its record names ref refs/tags/v2, not refs/pull/2/merge: it is no preview of pull request #2',
    )
    assert.equal(
      byName.v4!.reason,
      `${host('v4')} serves no record of a build (it answered 404), so nothing says it is the preview of pull request #4`,
    )
    assert.match(byName.v5!.reason!, /names ref refs\/pull\/6\/merge, not refs\/pull\/5\/merge/)
    assert.deepEqual(asked, [3], 'GitHub is asked about the proven preview only')
    assert.deepEqual(
      { v2: versionOf('v2'), v4: versionOf('v4'), v5: versionOf('v5') },
      kept,
      'the skipped namespaces serve what they served',
    )
    assert.notEqual(versionOf('v3'), v3, 'the preview of #3 serves the closed page')
    assert.ok(
      logger.lines.includes(`v2: skipped, left as it is: ${byName.v2!.reason}`),
      logger.lines.join('\n'),
    )
    assert.match(report, /v2.*skipped: left as it is \(its record names ref refs\/tags\/v2/)
  })

  test("a dry run skips the same way, its host found under the service's own CDN domain", async () => {
    // Its own site, whose record names its ref: reuse-reviewed would publish v2's, which names v2's.
    await deployed('rel-1', 'refs/heads/main', { 'reuse-reviewed': 'false' })
    const { result, asked } = await sweep({ 'namespace-prefix': 'rel-', 'dry-run': 'true' })
    assert.deepEqual(
      result.previews.map((p) => [p.namespace, p.outcome]),
      [['rel-1', 'skipped']],
    )
    assert.match(result.previews[0]!.reason!, /names ref refs\/heads\/main, not refs\/pull\/1\/merge/)
    assert.deepEqual(asked, [])
  })
})

// Issue 44: the sweep built its close with no CDN domain, so a cdn-domain the bootstrap does not give
// was dropped, and every closed preview was looked for at the wrong host (or at none).
test("the sweep's close sees the closed page at the sweep's own cdn-domain", async () => {
  const emulator = await startTestEmulator({ rateLimit: false, bootstrapCdnDomain: null })
  try {
    const site = await tempDir()
    await writeTree(site, { 'index.html': '<title>the game</title>' })
    const cdnDomain = emulator.url.replace('127.0.0.1', 'localhost')
    const connection = { 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, 'cdn-domain': cdnDomain }
    await deploy(readInputs(getter({ ...connection, path: site, namespace: 'pr-8' })), {
      logger: memoryLogger(),
      tempDir: await tempDir(),
      retry: fast,
      source: { commit: 'abcdef0123456789abcdef0123456789abcdef01', ref: 'refs/pull/8/merge' },
    })
    const operation = sweepOperation(() => ({ pullRequest: async () => ({ open: false }) }))
    const logger = memoryLogger()
    const result = await runOperation(
      operation,
      operation.read(getter({ ...connection, 'github-token': 'gh', 'namespace-prefix': 'pr-' })),
      { logger, retry: fast },
    )
    assert.deepEqual(
      result.previews.map((p) => [p.namespace, p.outcome]),
      [['pr-8', 'retired']],
    )
    assert.ok(!logger.lines.some((l) => l.includes('names no CDN domain')), logger.lines.join('\n'))
    assert.ok(
      logger.lines.some((l) => l.includes('demo-game--pr-8.localhost')),
      'the closed page is looked for at the host under cdn-domain',
    )
  } finally {
    await emulator.close()
  }
})
