// What a failed or cancelled deploy leaves to report: the scan's file count and size even when no
// manifest was made (the files are hashed while they upload), no site-id for a site whose upload was
// never completed, and a refused api-url that fails in a second or two, naming api-url.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { setTimeout as tick } from 'node:timers/promises'
import { UsageError } from '../../src/api/errors.ts'
import { CancelledError } from '../../src/common/cancel.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { deploy, deployFailure } from '../../src/deploy/pipeline.ts'
import { deployOutputs, failureReport, rerunText } from '../../src/deploy/account.ts'
import { type Emulator, type EmulatorOptions } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { readInputs } from '../../src/inputs/deploy.ts'
import { deadPort, getter, siteFiles, tempDir, writeTree } from '../support/helpers.ts'
import type { Report } from '../../src/common/report.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const TOKEN = 'gamehost-demo-token'

/** The report's text, its tables' cells included, for matching. */
const reportText = (report: Report) => JSON.stringify(report)

describe('a deploy that fails or is cancelled', () => {
  let site: string
  let temp: string
  let fileCount = 0
  let totalBytes = 0
  const emulators: Emulator[] = []
  before(async () => {
    site = await tempDir()
    const written = await writeTree(site, siteFiles(24))
    fileCount = written.size
    totalBytes = [...written.values()].reduce((sum, bytes) => sum + bytes.length, 0)
    temp = await tempDir()
  })
  after(() => Promise.all(emulators.map((e) => e.close())))
  const emulatorWith = async (options: EmulatorOptions) => {
    const emulator = await startTestEmulator({ rateLimit: false, ...options })
    emulators.push(emulator)
    return emulator
  }
  const inputs = (apiUrl: string, extra: Record<string, string> = {}) =>
    readInputs(getter({ 'api-url': apiUrl, token: TOKEN, 'game-id': GAME, path: site, ...extra }))

  test('a build that fails a local check makes no room for its preview: beforeCreating runs only once they pass', async () => {
    const calls: string[] = []
    const beforeCreating = async () => void calls.push('beforeCreating')
    const empty = await tempDir()
    const refused = await deploy(
      readInputs(
        getter({
          'api-url': 'http://127.0.0.1:1',
          token: TOKEN,
          'game-id': GAME,
          path: empty,
          namespace: 'pr-3',
        }),
      ),
      { logger: memoryLogger(), tempDir: temp, beforeCreating },
    ).catch((e: unknown) => e)
    assert.ok(refused instanceof UsageError, String(refused))
    assert.deepEqual(calls, [], 'nothing retired for a build that is refused')
    const emulator = await emulatorWith({})
    await deploy(
      inputs(emulator.url, {
        namespace: 'pr-3',
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
      }),
      {
        logger: memoryLogger(),
        tempDir: temp,
        beforeCreating,
      },
    )
    assert.deepEqual(calls, ['beforeCreating'])
  })

  test('a refused api-url fails after two quick retries, naming api-url, with the files it collected', async () => {
    const waits: number[] = []
    const thrown = await deploy(inputs(`http://127.0.0.1:${await deadPort()}`), {
      logger: memoryLogger(),
      tempDir: temp,
      retry: { sleep: async (ms) => void waits.push(ms) },
    }).catch((e: unknown) => e)
    const { error, partial } = deployFailure(thrown)
    assert.match(
      String(error),
      /games\.cdn\.createGameCdnSite failed: the connection was refused .*check api-url/,
    )
    assert.equal(waits.length, 2, 'not the 8 retries of an outage')
    assert.ok(partial)
    assert.equal(partial.manifest, undefined, 'the files are hashed while they upload: none were')
    const outputs = deployOutputs(partial)
    assert.equal(outputs['file-count'], fileCount)
    assert.equal(outputs['total-bytes'], totalBytes)
    assert.equal(outputs['site-id'], null)
  })

  test('with the real clock, a refused api-url ends the deploy within seconds', async () => {
    const started = Date.now()
    await assert.rejects(
      deploy(inputs(`http://127.0.0.1:${await deadPort()}`, { namespace: 'refused' }), {
        logger: memoryLogger(),
        tempDir: temp,
      }),
      /games\.getGameById failed: the connection was refused .*check api-url/,
    )
    assert.ok(Date.now() - started < 10_000, `${Date.now() - started} ms`)
  })

  test('a site creation that fails: file-count and total-bytes are what the scan collected', async () => {
    const emulator = await emulatorWith({
      faults: { script: { 'POST /cloud/games/:game_id/cdn/sites': ['503'] } },
    })
    const thrown = await deploy(inputs(emulator.url, { retries: '0' }), {
      logger: memoryLogger(),
      tempDir: temp,
    }).catch((e: unknown) => e)
    const { partial } = deployFailure(thrown)
    assert.ok(partial)
    assert.deepEqual(partial.collected, { fileCount, totalBytes })
    const outputs = deployOutputs(partial)
    assert.equal(outputs['file-count'], fileCount)
    assert.equal(outputs['total-bytes'], totalBytes)
    assert.match(reportText(failureReport(deployFailure(thrown).error, partial)), /collected; none uploaded/)
  })

  test('cancelled mid-upload: no site-id or upload-id output, the summary names the site left incomplete', async () => {
    const emulator = await emulatorWith({ faults: { putStallCount: 1_000_000 } })
    const controller = new AbortController()
    const running = deploy(inputs(emulator.url, { concurrency: '4' }), {
      logger: memoryLogger(),
      tempDir: temp,
      signal: controller.signal,
    }).catch((e: unknown) => e)
    while (emulator.faults.putStalls < 4) await tick(5)
    controller.abort(new CancelledError('SIGINT'))
    const { error, partial } = deployFailure(await running)
    assert.ok(error instanceof CancelledError)
    assert.ok(partial?.siteId, 'a site was created')
    assert.equal(partial.uploadCompleted, false)
    assert.equal(emulator.site(partial.siteId)?.completed, false)
    const outputs = deployOutputs(partial)
    assert.equal(outputs['site-id'], null, 'not a site that holds the files')
    assert.equal(outputs['upload-id'], null)
    assert.equal(outputs['file-count'], fileCount)
    assert.equal(outputs['total-bytes'], totalBytes)
    const report = reportText(failureReport(error, partial))
    assert.ok(report.includes(partial.siteId), 'the summary names the site')
    assert.match(report, /created; upload not completed/)
    assert.match(report, new RegExp(`${fileCount} \\([^)]+\\) collected; the upload did not finish`))
    assert.match(rerunText(partial, error), /never completed, .*a re-run creates a new site/)
  })

  test('an input error: the re-run text says to fix the input, not that a re-run starts over', async () => {
    const thrown = await deploy(inputs('http://127.0.0.1:1', { path: '/nonexistent/site' }), {
      logger: memoryLogger(),
      tempDir: temp,
    }).catch((e: unknown) => e)
    const { error, partial } = deployFailure(thrown)
    assert.ok(error instanceof UsageError)
    const text = rerunText(partial, error)
    assert.doesNotMatch(text, /starts over/)
    assert.match(
      text,
      /A re-run with the same inputs fails the same way: fix the input the error names first/,
    )
  })

  test("the service's refusal of the token: the re-run text names token", async () => {
    const emulator = await emulatorWith({})
    const thrown = await deploy(inputs(emulator.url, { token: 'not-a-token' }), {
      logger: memoryLogger(),
      tempDir: temp,
    }).catch((e: unknown) => e)
    const { error, partial } = deployFailure(thrown)
    assert.match(String(error), /400 TOKEN_INVALID.*\(ray id [^)]+\)\. .*check token/)
    const text = rerunText(partial, error)
    assert.doesNotMatch(text, /starts over/)
    assert.match(text, /fix token first/)
  })
})
