// Seen live, against the emulator: a publish the host serves only later is verified once it does; one
// the host never serves is rolled back (rollback), left (fail) or warned about (warn). The host that
// never serves the build is a small server on 127.0.0.1 answering the old page for every path, named
// by cdn-domain as the emulator's CDN is. The emulator's publish delay is the
// service's (3 s), on virtual time: the deploy's waits between checks move it, so each verdict comes
// from what the host served at each check, never from how fast the machine is.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { Agent } from 'undici'
import { ServiceClient } from '../../../src/api/client.ts'
import { memoryLogger } from '../../../src/common/logger.ts'
import { deploy, deployFailure } from '../../../src/deploy/pipeline.ts'
import { deployOutputs, failureReport, rerunText } from '../../../src/deploy/account.ts'
import { NotLiveError } from '../../../src/deploy/live/publish-and-see.ts'
import { verifyLive } from '../../../src/deploy/live/verify.ts'
import { startEmulator, type Emulator } from '../../../src/emulator/index.ts'
import { readInputs } from '../../../src/inputs/deploy.ts'
import { renderText } from '../../../src/common/report.ts'
import { getter, tempDir, writeTree } from '../../support/helpers.ts'
import { virtualTime } from '../../support/virtual-time.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const TOKEN = 'gamehost-demo-token'
/** The emulator's default, the service's: a publish reaches the host this long after it is made. */
const PUBLISH_DELAY_MS = 3_000

describe('seen live, against the emulator', () => {
  let emulator: Emulator
  let stale: Server
  let staleCdn: string
  let client: ServiceClient
  let agent: Agent
  const time = virtualTime()
  before(async () => {
    emulator = await startEmulator({ rateLimit: false, timer: time.timer })
    stale = createServer((req, res) => {
      req.resume()
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end('<title>the old build</title>')
    })
    await new Promise<void>((resolve) => stale.listen(0, '127.0.0.1', resolve))
    staleCdn = `http://localhost:${(stale.address() as AddressInfo).port}`
    agent = new Agent()
    client = new ServiceClient({
      baseUrl: emulator.url,
      token: TOKEN,
      dispatcher: agent,
      logger: memoryLogger(),
    })
  })
  after(async () => {
    stale.close()
    await agent.close()
    await emulator.close()
  })

  const cdn = () => emulator.url.replace('127.0.0.1', 'localhost')
  const build = async (title: string) => {
    const dir = await tempDir()
    await writeTree(dir, {
      'index.html': `<title>${title}</title>`,
      'game.js': `// ${title}`,
      'game.wasm': Buffer.from(`\0asm ${title}`),
    })
    return dir
  }
  const run = async (inputs: Record<string, string>, logger = memoryLogger()) => {
    const read = readInputs(getter({ 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, ...inputs }))
    return deploy(read, {
      logger,
      tempDir: await tempDir(),
      sleep: time.sleep,
      clock: time.clock,
    })
  }
  const live = (nameId: string) => emulator.namespaces(GAME).find((n) => n.nameId === nameId)!.versionId

  test('a deploy is verified at its url: /, its files and the .wasm with application/wasm', async () => {
    const logger = memoryLogger()
    const result = await run({ path: await build('one'), namespace: 'seen', 'cdn-domain': cdn() }, logger)
    const seen = result.verification!
    assert.equal(seen.verified, true)
    assert.ok(
      seen.durationMs >= PUBLISH_DELAY_MS,
      `seen once the publish reached the host: ${seen.durationMs} ms`,
    )
    assert.equal(seen.url, result.published!.url)
    assert.deepEqual(
      seen.checked.map((p) => p.urlPath),
      ['/', '/game.wasm', '/game.js', '/.well-known/gamehost.json'],
    )
    assert.equal(seen.checked[1]!.contentType, 'application/wasm')
    assert.equal(deployOutputs(result).verified, true)
    assert.ok(
      logger.lines.some((l) => l.startsWith(`Live at ${seen.url}: seen after `)),
      logger.lines.join('\n'),
    )
  })

  test('a publish the host serves only later is verified once it does', async () => {
    const first = await run({ path: await build('late-1'), namespace: 'late', 'cdn-domain': cdn() })
    const second = await run({
      path: await build('late-2'),
      namespace: 'late',
      'cdn-domain': cdn(),
      verify: 'false',
    })
    assert.equal(second.verification, undefined)
    const namespaceId = second.provisioned.namespaceId!
    // The host serves the first build again; the second is published, and reaches the host only after
    // the publish delay, as the CDN's edge does once its router catches up.
    await client.setNamespaceVersion(GAME, namespaceId, first.published!.versionId)
    time.advance(PUBLISH_DELAY_MS)
    await client.setNamespaceVersion(GAME, namespaceId, second.published!.versionId)
    const logger = memoryLogger()
    const seen = await verifyLive({
      url: second.published!.url!,
      expected: { files: second.manifest!.files, serving: second.serving },
      settings: { enabled: true, timeoutMs: 20_000, onFailure: 'rollback' },
      run: {
        dispatcher: agent,
        signal: new AbortController().signal,
        clock: time.clock,
        timeouts: { stallMs: 5_000 },
      },
      logger,
      sleep: time.sleep,
    })
    assert.equal(seen.verified, true)
    assert.ok(seen.attempts >= 2, `${seen.attempts} attempts`)
    assert.ok(seen.durationMs >= PUBLISH_DELAY_MS, `${seen.durationMs} ms`)
    assert.ok(
      logger.lines.some((l) => /^debug: Check 1: .*\/ had other bytes than the build's index\.html/.test(l)),
      logger.lines.join('\n'),
    )
  })

  test('rollback: a publish the host never serves is rolled back, and the run fails saying what it served', async () => {
    const first = await run({ path: await build('served'), namespace: 'rb', 'cdn-domain': cdn() })
    const before = live('rb')
    assert.equal(before, first.published!.versionId)
    const error = await run({
      path: await build('never served'),
      namespace: 'rb',
      'cdn-domain': staleCdn,
      'verify-timeout': '1',
    }).then(
      () => assert.fail('the deploy succeeded'),
      (thrown: unknown) => thrown,
    )
    const { error: cause, partial } = deployFailure(error)
    assert.ok(cause instanceof NotLiveError, String(cause))
    const url = partial!.published!.url
    assert.equal(url, `http://demo-game--rb.localhost:${new URL(staleCdn).port}/`)
    assert.match(
      cause.message,
      new RegExp(
        `^Not live: ${url} did not serve this build within \\d+\\.\\d s \\(\\d+ checks\\): ${url} was 28 bytes, ` +
          `not the build's index\\.html of 27 bytes\\. Namespace rb was put back on version ${before}, which it served before\\.$`,
      ),
    )
    assert.equal(live('rb'), before, 'the namespace serves what it served before')
    assert.notEqual(partial!.published!.versionId, before)
    assert.equal(partial!.verification!.rolledBackTo, before)
    assert.equal(deployOutputs(partial!).verified, false)
    assert.match(
      rerunText(partial, cause),
      new RegExp(
        `The namespace serves version ${before} again, as before this run\\. A re-run publishes this build again`,
      ),
    )
    assert.match(
      renderText(failureReport(cause, partial)),
      /Live\s+not seen live: .* was 28 bytes.*put back on version/,
    )
  })

  test('rollback of a new namespace: nothing to go back to, the run fails with the account', async () => {
    const error = await run({
      path: await build('new'),
      namespace: 'rbnew',
      'cdn-domain': staleCdn,
      'verify-timeout': '1',
    }).then(
      () => assert.fail('the deploy succeeded'),
      (thrown: unknown) => deployFailure(thrown).error,
    )
    assert.ok(error instanceof NotLiveError)
    assert.match(
      error.message,
      /Namespace rbnew served no version before this run, so there is none to put it back on/,
    )
  })

  test('fail: the run fails with the account, the namespace keeps the new version', async () => {
    await run({ path: await build('kept'), namespace: 'nofix', 'cdn-domain': cdn() })
    const error = await run({
      path: await build('not seen'),
      namespace: 'nofix',
      'cdn-domain': staleCdn,
      'verify-timeout': '1',
      'on-verify-failure': 'fail',
    }).then(
      () => assert.fail('the deploy succeeded'),
      (thrown: unknown) => thrown,
    )
    const { error: cause, partial } = deployFailure(error)
    assert.ok(cause instanceof NotLiveError)
    assert.match(cause.message, /on-verify-failure is fail: namespace nofix stays on version/)
    assert.equal(live('nofix'), partial!.published!.versionId)
    assert.equal(partial!.verification!.rolledBackTo, undefined)
  })

  test('warn: a warning with the account, the run succeeds with verified false', async () => {
    const logger = memoryLogger()
    const result = await run(
      {
        path: await build('warned'),
        namespace: 'warned',
        'cdn-domain': staleCdn,
        'verify-timeout': '1',
        'on-verify-failure': 'warn',
      },
      logger,
    )
    assert.equal(result.verification!.verified, false)
    assert.equal(deployOutputs(result).verified, false)
    assert.equal(live('warned'), result.published!.versionId)
    assert.ok(
      logger.lines.some(
        (l) => l.startsWith('warning: Not seen live: Not seen live: ') && l.includes('verified false'),
      ),
      logger.lines.join('\n'),
    )
    assert.ok(!logger.lines.some((l) => l.startsWith('Live at')), 'never said live')
  })
})
