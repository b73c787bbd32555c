// reuse-reviewed through the deploy, against the emulator: a release of the build a preview serves
// publishes the preview's site (no site created, no PUT) and says so; a preview never reuses; a build
// of the same sizes but other bytes uploads and names the file; reuse-reviewed: false uploads.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ServiceClient } from '../../src/api/client.ts'
import { createAgent } from '../../src/api/http.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { renderText } from '../../src/common/report.ts'
import { deployOutputs, deployReport } from '../../src/deploy/account.ts'
import { deploy, type DeployResult } from '../../src/deploy/pipeline.ts'
import { fetchLocally, type Emulator } from '../../src/emulator/index.ts'
import { readInputs } from '../../src/inputs/deploy.ts'
import { GAME, TOKEN } from '../support/actions.ts'
import { startTestEmulator, writesDuring } from '../support/emulator.ts'
import { getter, tempDir, writeTree } from '../support/helpers.ts'

const fast = { sleep: async () => {} }
const FILES = {
  'index.html': '<!doctype html><title>space game</title><script src="game.js"></script>',
  'game.js': 'start("level-1")',
  'assets/level.json': '{"level":1}',
}

describe('reuse-reviewed: a release ships the bytes a namespace serves', () => {
  let emulator: Emulator
  let temp: string
  const agent = createAgent()
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false })
    temp = await tempDir()
  })
  after(async () => {
    await emulator.close()
    await agent.close()
  })

  const build = async (files: Record<string, string> = FILES) => {
    const dir = await tempDir()
    await writeTree(dir, files)
    return dir
  }
  const run = async (path: string, namespace: string, ref: string, extra: Record<string, string> = {}) => {
    const logger = memoryLogger()
    const result = await deploy(
      readInputs(
        getter({ 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, path, namespace, ...extra }),
      ),
      { logger, tempDir: temp, retry: fast, source: { commit: 'a1b2c3d'.padEnd(40, '0'), ref } },
    )
    return { result, logger }
  }
  const counted = <T>(fn: () => Promise<T>) => writesDuring(emulator, fn)
  const reviewedOf = (result: DeployResult) => result.reviewed

  test("the release after the preview: the preview's site, 0 PUTs, served byte-exact, the proof said", async () => {
    const site = await build()
    const preview = await counted(() => run(site, 'pr-12', 'refs/pull/12/merge'))
    assert.equal(preview.sites, 1)
    assert.equal(preview.puts, 4, 'three files and the record')
    assert.equal(reviewedOf(preview.value.result), undefined, 'a preview does not look')

    const client = new ServiceClient({
      baseUrl: emulator.url,
      token: TOKEN,
      logger: memoryLogger(),
      dispatcher: agent,
    })
    const prodBefore = (await client.getGame(GAME)).game.namespaces.find((n) => n.name_id === 'prod')!
    const baseConfig = (await client.getVersion(GAME, prodBefore.version_id)).version.config

    const release = await counted(() => run(site, 'prod', 'refs/heads/main'))
    const { result, logger } = release.value
    assert.equal(release.puts, 0)
    assert.equal(release.sites, 0)
    const previewSite = preview.value.result.siteId!
    assert.equal(result.siteId, previewSite)
    assert.equal(result.upload, undefined)
    assert.equal(result.skipped, false)
    const digest = preview.value.result.manifest!.digest
    assert.equal(result.manifest?.digest, digest)
    assert.deepEqual(result.reviewed, { reusedFrom: 'pr-12', digest, commit: 'a1b2c3d'.padEnd(40, '0') })
    assert.equal(result.verification?.verified, true, 'seen live, by its record and sampled files')

    const outputs = deployOutputs(result)
    assert.equal(outputs['reused-from'], 'pr-12')
    assert.equal(outputs['site-id'], previewSite)
    assert.equal(outputs['upload-id'], null)
    assert.equal(outputs['digest'], digest)
    const report = renderText(deployReport(result))
    assert.match(report, new RegExp(`Reviewed build +The bytes reviewed in pr-12 \\(${digest}\\)`))
    assert.match(report, /Parts +0\n/)
    assert.ok(
      logger.lines.some((l) => l.startsWith(`The files are the bytes reviewed in pr-12 (${digest})`)),
      logger.lines.join('\n'),
    )

    // A new version of prod, on prod's config, names the preview's site; prod serves each byte of it.
    const version = (await client.getVersion(GAME, result.published!.versionId)).version
    assert.equal(version.config.cdn?.site_id, previewSite)
    assert.deepEqual(version.config.matchmaker, baseConfig.matchmaker)
    for (const [path, text] of Object.entries(FILES)) {
      const served = await fetchLocally(`${result.published!.url}${path}`)
      assert.equal(served.status, 200, path)
      assert.equal(served.text, text, path)
    }
  })

  test('a preview does not reuse: its record must name its own pull request', async () => {
    const site = await build()
    const made = await counted(() => run(site, 'pr-13', 'refs/pull/13/merge'))
    assert.equal(made.sites, 1)
    assert.equal(made.value.result.reviewed, undefined)
    const record = JSON.parse(
      (await fetchLocally(`${made.value.result.published!.url}.well-known/gamehost.json`)).text,
    ) as { ref: string }
    assert.equal(record.ref, 'refs/pull/13/merge')
  })

  test('the same sizes but other bytes: uploaded, and the line names the file that differs', async () => {
    const rebuilt = await build({ ...FILES, 'game.js': 'start("level-2")' })
    const made = await counted(() => run(rebuilt, 'staging', 'refs/heads/main'))
    assert.equal(made.sites, 1)
    assert.equal(made.puts, 4)
    const reviewed = made.value.result.reviewed
    assert.ok(reviewed && 'unmatched' in reviewed, JSON.stringify(reviewed))
    assert.match(
      reviewed.unmatched,
      /^pr-1[23] serves 3 files and 98 B too, but its digest is sha256:\w+, not sha256:\w+: a file differs \(game\.js\), so it is another build, or one that is not byte-reproducible$/,
    )
    assert.match(renderText(deployReport(made.value.result)), /Reviewed build +none is this one/)
    assert.equal(deployOutputs(made.value.result)['reused-from'], null)
  })

  test('reuse-reviewed: false uploads the build a namespace serves', async () => {
    const site = await build()
    const made = await counted(() => run(site, 'rel', 'refs/heads/main', { 'reuse-reviewed': 'false' }))
    assert.equal(made.sites, 1)
    assert.equal(made.puts, 4)
    assert.equal(made.value.result.reviewed, undefined)
  })
})
