// Waiting out loud, against the emulator on virtual time: a long seen-live wait says every 15 s what
// the host answers and how long is left, and a wait that cannot succeed ends at its first check,
// saying why, instead of after verify-timeout. The edge's delay, the deploy's waits and the progress
// timer all run on one virtual clock: each line comes from what the host served at that moment.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Agent } from 'undici'
import { ServiceClient } from '../../../src/api/client.ts'
import { memoryLogger, type Logger } from '../../../src/common/logger.ts'
import type { Timer } from '../../../src/common/timeouts.ts'
import { deploy, type DeployResult } from '../../../src/deploy/pipeline.ts'
import { closePreview } from '../../../src/deploy/live/close.ts'
import { NotLiveError, publishAndSee } from '../../../src/deploy/live/publish-and-see.ts'
import { startEmulator, type Emulator } from '../../../src/emulator/index.ts'
import { readInputs } from '../../../src/inputs/deploy.ts'
import { getter, tempDir, writeTree } from '../../support/helpers.ts'
import { virtualTime } from '../../support/virtual-time.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const TOKEN = 'gamehost-demo-token'
/** The seed's 0.0.1, which `staging` serves: made with the game, it has no CDN site. */
const NO_SITE_VERSION = '1a6d3f8b-0c4e-4b7a-9f52-6e8d0b3c7a19'
/** Two progress lines: checks at 0, 0.5, 1.5, 3.5, 7.5, 15.5, 25.5 and 35.5 s, the last one sees it. */
const EDGE_DELAY_MS = 35_000

describe('waiting out loud, against the emulator', () => {
  const time = virtualTime()
  let emulator: Emulator
  let agent: Agent
  let client: ServiceClient
  before(async () => {
    emulator = await startEmulator({ rateLimit: false, timer: time.timer, publishDelayMs: EDGE_DELAY_MS })
    agent = new Agent()
    client = new ServiceClient({
      baseUrl: emulator.url,
      token: TOKEN,
      dispatcher: agent,
      logger: memoryLogger(),
    })
  })
  after(async () => {
    await agent.close()
    await emulator.close()
  })

  const cdn = () => emulator.url.replace('127.0.0.1', 'localhost')
  const build = async (title: string) => {
    const dir = await tempDir()
    await writeTree(dir, { 'index.html': `<title>${title}</title>`, 'game.js': `// ${title}` })
    return dir
  }
  const live = (nameId: string) => emulator.namespaces(GAME).find((n) => n.nameId === nameId)!

  /**
   * A logger, and the timer the run says its progress on. A wait of the run moves the clock to each
   * progress line due, and on only once it was said (a line may first read the host's record).
   */
  const watched = () => {
    const logger = memoryLogger()
    let due = 0
    let heard: (() => void) | undefined
    const ticks = new Set<number>()
    const said = () => logger.lines.filter((l) => l.startsWith('Still waiting for ')).length
    const info = logger.info.bind(logger)
    const watchedLogger: Logger = { ...logger, info: (line) => (info(line), heard?.()) }
    const timer: Timer = {
      after(ms, callback) {
        const at = time.clock.now() + ms
        ticks.add(at)
        const cancel = time.timer.after(ms, () => (ticks.delete(at), due++, callback()))
        return () => (ticks.delete(at), cancel())
      },
    }
    const sleep = async (ms: number, signal?: AbortSignal) => {
      signal?.throwIfAborted()
      const until = time.clock.now() + ms
      for (let tick = Math.min(...ticks); tick <= until; tick = Math.min(...ticks)) {
        time.advance(tick - time.clock.now())
        while (said() < due) await new Promise<void>((resolve) => (heard = resolve))
      }
      await time.sleep(until - time.clock.now(), signal)
    }
    return { lines: logger.lines, logger: watchedLogger, timer, sleep }
  }

  const run = async (inputs: Record<string, string>, watch = watched(), commit?: string) => {
    const read = readInputs(
      getter({ 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, 'cdn-domain': cdn(), ...inputs }),
    )
    return deploy(read, {
      logger: watch.logger,
      tempDir: await tempDir(),
      sleep: watch.sleep,
      clock: time.clock,
      timer: watch.timer,
      ...(commit ? { source: { commit } } : {}),
    })
  }

  test('a long seen-live wait says every 15 s what the host answers and how long is left', async () => {
    const first = watched()
    const one = await run({ path: await build('one'), namespace: 'slow' }, first, 'a'.repeat(40))
    assert.equal(one.verification?.verified, true, first.lines.join('\n'))
    const url = one.published!.url!
    const waiting = (lines: string[]) => lines.filter((l) => l.startsWith(`Still waiting for ${url} `))
    // A new namespace serves nothing (the seed's versions have no site) until the publish reaches it.
    assert.deepEqual(waiting(first.lines), [
      `Still waiting for ${url} to serve this build, after 15.0 s (5 checks): / answered 404, not 200 with index.html; 285 s left`,
      `Still waiting for ${url} to serve this build, after 30.0 s (7 checks): / answered 404, not 200 with index.html; 270 s left`,
    ])

    const second = watched()
    const two = await run({ path: await build('two'), namespace: 'slow' }, second, 'b'.repeat(40))
    assert.equal(two.verification?.verified, true, second.lines.join('\n'))
    const lines = waiting(second.lines)
    assert.equal(lines.length, 2, second.lines.join('\n'))
    const digest = one.manifest!.digest.slice(0, 19)
    lines.forEach((line, n) =>
      assert.match(
        line,
        new RegExp(
          `^Still waiting for \\S+ to serve this build, after ${15 * (n + 1)}\\.0 s \\(\\d+ checks\\): / had other bytes than ` +
            `the build's index\\.html \\(SHA-256 [0-9a-f]{12}…, not [0-9a-f]{12}…\\), as it serves build ${digest}… ` +
            `\\(commit aaaaaaa\\), the one it served before; ${300 - 15 * (n + 1)} s left$`,
        ),
      ),
    )
    assert.ok(second.lines.indexOf(lines[1]!) < second.lines.findIndex((l) => l.startsWith(`Live at ${url}`)))
  })

  const change = (deployed: DeployResult, nameId: string, versionId: string) => ({
    gameId: GAME,
    namespaceId: deployed.provisioned.namespaceId!,
    nameId,
    published: {
      versionId,
      versionName: versionId,
      replacedVersionId: deployed.published!.versionId,
      created: true,
      url: deployed.published!.url,
      domain: undefined,
    },
    alreadyServed: false,
  })
  const see = (watch: ReturnType<typeof watched>) => ({
    settings: { enabled: true, timeoutMs: 300_000, onFailure: 'rollback' as const },
    run: {
      client,
      dispatcher: agent,
      signal: new AbortController().signal,
      clock: time.clock,
      timer: watch.timer,
      timeouts: { stallMs: 5_000 },
    },
    logger: watch.logger,
    sleep: watch.sleep,
  })

  test('a version with no site ends the wait at its first check, saying why, and is rolled back', async () => {
    const deployed = await run({ path: await build('site'), namespace: 'nosite' })
    const watch = watched()
    // What a promotion waits for: another record than the one served before.
    const expected = { otherThan: { sha256: deployed.record!.sha256 } }
    const error = await publishAndSee(change(deployed, 'nosite', NO_SITE_VERSION), {
      ...see(watch),
      expected,
    }).then(
      () => assert.fail('seen live'),
      (thrown: unknown) => thrown,
    )
    assert.ok(error instanceof NotLiveError, String(error))
    assert.equal(error.verification.attempts, 1, watch.lines.join('\n'))
    assert.match(
      error.message,
      new RegExp(
        `^Not live: \\S+ cannot serve this build, as found after 0\\.0 s \\(1 check\\): version '${NO_SITE_VERSION}' ` +
          `\\(${NO_SITE_VERSION}\\), which namespace nosite is on, has no CDN site \\(no cdn in its config: no deploy made it\\), ` +
          `so its host will serve no file at all; \\S+ is still the record of the build it served before the publish\\. ` +
          `Namespace nosite was put back on version ${deployed.published!.versionId}, which it served before\\.$`,
      ),
    )
    assert.equal(live('nosite').versionId, deployed.published!.versionId)
  })

  test('a private namespace checked without its credentials ends the wait at its first check, saying why', async () => {
    const deployed = await run({
      path: await build('hidden'),
      namespace: 'hidden',
      'basic-auth': 'tester:a-long-passphrase',
    })
    assert.equal(deployed.verification?.verified, true)
    const watch = watched()
    const { published } = change(deployed, 'hidden', deployed.published!.versionId)
    const error = await publishAndSee(
      { ...change(deployed, 'hidden', published.versionId), alreadyServed: true },
      { ...see(watch), expected: { files: deployed.manifest!.files } },
    ).then(
      () => assert.fail('seen live'),
      (thrown: unknown) => thrown,
    )
    assert.ok(error instanceof NotLiveError, String(error))
    assert.equal(error.verification.attempts, 1)
    assert.match(
      error.message,
      /^Not live: \S+ cannot serve this build, as found after 0\.0 s \(1 check\): namespace hidden is private \(basic auth\) while this run has no credentials for it, so nothing it fetches there tells which build is served; \S+ answered 401, not 200 with index\.html\./,
    )
  })

  test('closing a private preview without its credentials does not wait for what it cannot see', async () => {
    await run({ path: await build('pr 31'), namespace: 'pr-31', 'basic-auth': 'tester:a-long-passphrase' })
    const watch = watched()
    const inputs = readInputs(
      getter({
        'api-url': emulator.url,
        token: TOKEN,
        'game-id': GAME,
        'cdn-domain': cdn(),
        namespace: 'pr-31',
        // Without the change, the close waits this long (real time: a close has no sleep to inject).
        'verify-timeout': '5',
      }),
      {},
      { closing: true },
    )
    if (inputs.target.kind === 'none') assert.fail('no target')
    const closed = await closePreview(
      { ...inputs, target: inputs.target },
      { logger: watch.logger, pullRequest: 31 },
    )
    assert.equal(closed.alreadyClosed, false)
    assert.ok(
      watch.lines.some((l) =>
        /^Published at \S+ \(not checked: namespace pr-31 is private \(basic auth\), and the close has no credentials for it\)$/.test(
          l,
        ),
      ),
      watch.lines.join('\n'),
    )
  })
})
