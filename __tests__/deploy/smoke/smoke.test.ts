// The smoke test without a browser: which browser is found (the input, the environment, each OS's
// install paths), what a watch of the page comes to (judge: the line, the first problem, what to do),
// the stage's ending (rollback, fail, warn, skipped) with the page's watch replaced, and its inputs.
// The real browser's part is in __tests__/bundles/smoke-test.test.ts.
import assert from 'node:assert/strict'
import { rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, test } from 'node:test'
import { UsageError } from '../../../src/api/errors.ts'
import type { ServiceClient } from '../../../src/api/client.ts'
import { memoryLogger } from '../../../src/common/logger.ts'
import { systemClock, systemTimer, type Timer } from '../../../src/common/timeouts.ts'
import type { Published } from '../../../src/deploy/live/prepare.ts'
import { browserName, findBrowser, installPaths } from '../../../src/deploy/smoke/browser.ts'
import { smokeTest, type SmokeResult } from '../../../src/deploy/smoke/index.ts'
import { judge, SmokeTestError } from '../../../src/deploy/smoke/verdict.ts'
import { rerunText } from '../../../src/deploy/account.ts'
import { ProblemLog } from '../../../src/deploy/smoke/problems.ts'
import type { StartSeen } from '../../../src/deploy/smoke/engine-start.ts'
import type { Problem, Seen, WatchOptions } from '../../../src/deploy/smoke/watch.ts'
import { readInputs, type TargetedInputs } from '../../../src/inputs/deploy.ts'
import { getter } from '../../support/helpers.ts'

const URL_ = 'http://demo-game--pr-1.localhost:8787/'
const seen = ({
  problems = [],
  ...over
}: Partial<Omit<Seen, 'problems'>> & { problems?: Problem[] } = {}): Seen => ({
  browser: 'Chromium 156',
  loadMs: 400,
  answered: 5,
  canvas: { width: 320, height: 200, colours: 4, first: '#102030' },
  screenshot: '/tmp/runner/gamehost-screenshot-1.png',
  ...over,
  problems: ProblemLog.of(problems),
})

describe('findBrowser', () => {
  const only =
    (...files: string[]) =>
    (file: string) =>
      files.includes(file)

  test('the browser input, when it can be run; else it is named, never replaced by another', () => {
    const env = { CHROME_BIN: '/usr/bin/google-chrome' }
    const runnable = only('/opt/chrome/chrome', '/usr/bin/google-chrome')
    assert.deepEqual(findBrowser({ given: '/opt/chrome/chrome', env, platform: 'linux', runnable }), {
      path: '/opt/chrome/chrome',
      from: 'browser',
    })
    assert.deepEqual(findBrowser({ given: '/opt/none', env, platform: 'linux', runnable }), {
      missing: 'browser is /opt/none, which is not a program this runner can run',
    })
  })

  test('CHROME_PATH, CHROME_BIN, PUPPETEER_EXECUTABLE_PATH in that order, each only when it can be run', () => {
    const env = { CHROME_PATH: '/gone', CHROME_BIN: '/b/chrome', PUPPETEER_EXECUTABLE_PATH: '/p/chrome' }
    const found = findBrowser({ env, platform: 'linux', runnable: only('/b/chrome', '/p/chrome') })
    assert.deepEqual(found, { path: '/b/chrome', from: 'CHROME_BIN' })
    const first = findBrowser({
      env: { ...env, CHROME_PATH: '/a/chrome' },
      platform: 'linux',
      runnable: () => true,
    })
    assert.deepEqual(first, { path: '/a/chrome', from: 'CHROME_PATH' })
  })

  test("each OS's install paths: GitHub's runners' Chrome, Debian's chromium", () => {
    assert.deepEqual(findBrowser({ env: {}, platform: 'linux', runnable: only('/usr/bin/chromium') }), {
      path: '/usr/bin/chromium',
      from: '/usr/bin/chromium',
    })
    const mac = '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome'
    assert.equal(installPaths('darwin', {})[0], mac)
    const windows = installPaths('win32', { PROGRAMFILES: 'C:\\Program Files' })
    assert.equal(windows[0], 'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe')
    const none = findBrowser({ env: {}, platform: 'linux', runnable: () => false })
    assert.ok('missing' in none)
    assert.match(
      none.missing,
      /^no Chrome or Chromium found \(CHROME_PATH, CHROME_BIN, PUPPETEER_EXECUTABLE_PATH/,
    )
    assert.match(none.missing, /set browser to one's path/)
  })

  test('the name said: the product by the program, the major version by what it answers', () => {
    assert.equal(browserName('/usr/bin/chromium', 'Chrome/156.0.8078.108'), 'Chromium 156')
    assert.equal(browserName('/usr/bin/google-chrome', 'Chrome/131.0.6778.85'), 'Chrome 131')
    assert.equal(browserName('C:\\Program Files\\Microsoft\\Edge\\msedge.exe', 'Edge/130.0.1'), 'Edge 130')
  })
})

describe('judge', () => {
  test('no problem and a canvas that drew: passed, in one line', () => {
    const result = judge(seen(), 3000)
    assert.equal(result.status, 'passed')
    assert.equal(
      result.line,
      'the game started in Chromium 156 in 0.4 s: 0 errors, 5 requests answered, the canvas drew',
    )
    assert.equal(result.screenshot, '/tmp/runner/gamehost-screenshot-1.png')
  })

  test("connections to the runner's network refused: counted and the first named, not a failure by themselves", () => {
    const result = judge(
      seen({
        refused: {
          count: 4,
          destinations: 3,
          named: [
            { destination: '127.0.0.1:8787', range: 'loopback' },
            { destination: '169.254.169.254:80', range: 'link-local' },
          ],
        },
      }),
      3000,
    )
    assert.equal(result.status, 'passed')
    assert.equal(
      result.line,
      'the game started in Chromium 156 in 0.4 s: 0 errors, 5 requests answered, ' +
        "4 connections to the runner's network refused (127.0.0.1:8787 loopback, 169.254.169.254:80 link-local, …), the canvas drew",
    )
  })

  test('a page without a canvas passes, and says it has none', () => {
    const result = judge(seen({ canvas: undefined }), 3000)
    assert.equal(result.status, 'passed')
    assert.match(result.line, /, no canvas on the page$/)
  })

  test('a canvas of one flat colour fails: the game drew nothing, and smoke-test-seconds is named', () => {
    const result = judge(seen({ canvas: { width: 320, height: 200, colours: 1, first: '#000000' } }), 3000)
    assert.equal(result.status, 'failed')
    assert.equal(
      result.problem,
      'the canvas (320×200) shows one flat colour (#000000) where it is seen 3.0 s after the page loaded: the game drew nothing',
    )
    assert.match(result.remedy!, /raise smoke-test-seconds/)
  })

  test('judged on what the screenshot shows: a page of one colour, a canvas all covered', () => {
    const blank = judge(seen({ canvas: undefined, painted: { colours: 1, first: '#ffffff' } }), 3000)
    assert.equal(blank.status, 'failed')
    assert.match(
      blank.line,
      /, the page one flat colour \(#ffffff\); first: the page shows one flat colour \(#ffffff\) 3\.0 s after/,
    )
    const covered = judge(seen({ canvas: { width: 320, height: 200, colours: 0 } }), 3000)
    assert.equal(covered.status, 'failed')
    assert.match(covered.line, /the canvas \(320×200\) is covered by the page's own elements/)
  })

  test('the signal that decided is said', () => {
    const decided = (over: Parameters<typeof seen>[0]) => judge(seen(over), 3000).decidedBy
    assert.equal(decided({}), 'no problem seen, and the canvas drew (screenshot)')
    assert.equal(decided({ canvas: undefined }), 'no problem seen, and the page painted (screenshot)')
    assert.equal(
      decided({ problems: [{ kind: 'browser', message: "the page's main thread froze" }] }),
      'the page or the browser stopped answering',
    )
    assert.equal(
      decided({ problems: [{ kind: 'left', url: 'about:blank' }] }),
      'the page left the deployed URL',
    )
    assert.equal(
      decided({ problems: [{ kind: 'request', url: 'http://x/a.data', stalled: { bytes: 1, ms: 1 } }] }),
      'a request not ended when the watch ended',
    )
    assert.equal(decided({ problems: [{ kind: 'exception', message: 'boom' }] }), 'an uncaught exception')
    assert.equal(
      decided({ painted: { colours: 1, first: '#ffffff' }, canvas: undefined }),
      'the screenshot: the page one flat colour',
    )
    assert.equal(
      decided({ canvas: { width: 1, height: 1, colours: 1, first: '#000000' } }),
      'the screenshot: the canvas one flat colour where it shows',
    )
  })

  test('the first problem is named, with what to do about it', () => {
    const missing = judge(
      seen({
        problems: [
          { kind: 'request', url: `${URL_}Build/game.data.gz`, status: 404 },
          { kind: 'alert', message: 'Unable to download Build/game.data.gz (404)' },
        ],
      }),
      3000,
    )
    assert.equal(missing.status, 'failed')
    assert.equal(
      missing.line,
      'the game did not start in Chromium 156: 1 error, 5 requests answered, 1 request failed, the canvas drew; ' +
        `first: ${URL_}Build/game.data.gz answered 404`,
    )
    assert.match(
      missing.remedy!,
      /^the page asks for a file the site does not have: check that the files patterns/,
    )

    const compressed = judge(
      seen({
        problems: [
          {
            kind: 'exception',
            message: `SyntaxError: Invalid or unexpected token at ${URL_}Build/game.framework.js.gz:1:1`,
          },
        ],
      }),
      3000,
    )
    assert.match(compressed.remedy!, /^a compressed file reached the browser without its Content-Encoding/)

    const wasm = judge(
      seen({
        problems: [
          {
            kind: 'engine',
            engine: 'unity',
            message: "TypeError: Incorrect response MIME type. Expected 'application/wasm'.",
          },
        ],
      }),
      3000,
    )
    assert.equal(
      wasm.problem,
      "Unity reported: TypeError: Incorrect response MIME type. Expected 'application/wasm'.",
    )
    assert.match(wasm.remedy!, /without Content-Type application\/wasm/)

    const refused = judge(seen({ problems: [{ kind: 'request', url: URL_, status: 401 }] }), 3000)
    assert.match(refused.remedy!, /check basic-auth/)
    const unreachable = judge(
      seen({
        problems: [{ kind: 'request', url: 'https://cdn.other/x.js', failure: 'net::ERR_NAME_NOT_RESOLVED' }],
      }),
      3000,
    )
    assert.equal(
      unreachable.problem,
      'https://cdn.other/x.js could not be fetched (net::ERR_NAME_NOT_RESOLVED)',
    )
  })
})

describe("judge: the engine's word that it started", () => {
  const started = (engine: StartSeen['engine'], created = ['webgl2']): StartSeen => ({
    engine,
    webgl: { created, refused: [] },
  })
  const unity = { engine: 'unity', call: 'createUnityInstance' } as const

  test('resolved, with WebGL: passed, said in the line and in what decided', () => {
    const passed = judge(seen({ started: started({ ...unity, resolvedMs: 2600 }) }), 3000)
    assert.equal(passed.status, 'passed')
    assert.equal(
      passed.line,
      'the game started in Chromium 156 in 0.4 s: Unity said it started (createUnityInstance resolved at 2.6 s, WebGL2), ' +
        '0 errors, 5 requests answered, the canvas drew (WebGL2)',
    )
    assert.equal(
      passed.decidedBy,
      'Unity said it started (createUnityInstance resolved at 2.6 s, WebGL2), no problem seen, and the canvas drew (screenshot)',
    )
  })

  test('rejected: failed, the rejection named, unless a cause was seen first (a file refused), named first', () => {
    const rejected = started({ ...unity, rejected: 'Unable to download Build/game.data.gz (404)' })
    const alone = judge(
      seen({
        started: rejected,
        problems: [{ kind: 'alert', message: 'Unable to download Build/game.data.gz (404)' }],
      }),
      3000,
    )
    assert.equal(alone.status, 'failed')
    assert.equal(
      alone.problem,
      'Unity did not start: createUnityInstance rejected (Unable to download Build/game.data.gz (404))',
    )
    assert.equal(alone.decidedBy, "Unity's start: its promise rejected")
    const caused = judge(
      seen({
        started: rejected,
        problems: [
          { kind: 'alert', message: 'Unable to download Build/game.data.gz (404)' },
          { kind: 'request', url: `${URL_}Build/game.data.gz`, status: 404 },
        ],
      }),
      3000,
    )
    assert.equal(caused.problem, `${URL_}Build/game.data.gz answered 404`)
    assert.match(caused.line, /: 2 errors, 5 requests answered, 1 request failed, /)
  })

  test('not resolved when the watch ended, or resolved without WebGL: failed, said so', () => {
    const pending = judge(seen({ started: started({ engine: 'godot', call: 'engine.startGame' }) }), 3000)
    assert.equal(
      pending.problem,
      'Godot did not say it started: engine.startGame had not resolved when the watch ended',
    )
    assert.match(
      pending.remedy!,
      /^if the game takes longer than 6\.0 s after its page loaded to start, raise smoke-test-seconds/,
    )
    const noWebgl = judge(seen({ started: started({ ...unity, resolvedMs: 900 }, []) }), 3000)
    assert.equal(
      noWebgl.problem,
      'Unity said it started (createUnityInstance resolved), but no WebGL context was created',
    )
  })

  test('no engine call heard: judged as before, a WebGL context said where one was made', () => {
    const plain = judge(seen({ started: started(undefined) }), 3000)
    assert.equal(plain.status, 'passed')
    assert.match(plain.line, /: 0 errors, 5 requests answered, the canvas drew \(WebGL2\)$/)
  })
})

describe('the problems of a page that says too much', () => {
  test('every one counted; the first five of each kind kept, in order, each cut to 300 characters', () => {
    const log = new ProblemLog()
    for (let i = 0; i < 1000; i++) log.push({ kind: 'console', message: `tick ${i} ${'x'.repeat(1000)}` })
    log.push({ kind: 'engine', engine: 'unity', message: 'Unable to parse Build/game.framework.js.gz!' })
    log.push({ kind: 'request', url: `${URL_}${'a'.repeat(5000)}`, status: 404 })
    assert.equal(log.count(), 1002)
    assert.equal(log.count('console'), 1000)
    assert.equal(log.count('request'), 1)
    assert.equal(log.leftOut, 995)
    assert.deepEqual(
      log.kept.map((p) => p.kind),
      ['console', 'console', 'console', 'console', 'console', 'engine', 'request'],
    )
    const first = log.kept[0] as { message: string }
    assert.equal(first.message, `tick 0 ${'x'.repeat(293)}… (1,007 characters)`)
    assert.match((log.kept[6] as { url: string }).url, /^http:.{295}… \(5,038 characters\)$/)
  })

  test('judged: the line counts them all, quotes the first cut, and the remedy reads the engine kept', () => {
    const result = judge(
      seen({
        problems: [
          ...Array.from({ length: 50 }, () => ({ kind: 'console' as const, message: 'E'.repeat(3_000_000) })),
          { kind: 'engine', engine: 'unity', message: 'Unable to parse Build/game.framework.js.gz!' },
        ],
      }),
      3000,
    )
    assert.match(
      result.line,
      /: 51 errors, 5 requests answered, the canvas drew; first: console\.error: E{300}… \(3,000,000 characters\)$/,
    )
    assert.ok(result.line.length < 500, result.line)
    assert.match(result.remedy!, /^a compressed file reached the browser without its Content-Encoding/)
  })
})

describe('smokeTest: how a failure ends', () => {
  const published: Published = {
    versionId: 'new-version',
    versionName: 'build 2',
    replacedVersionId: 'old-version',
    created: true,
    url: URL_,
    domain: undefined,
  }
  const inputsWith = (values: Record<string, string>): TargetedInputs =>
    readInputs(
      getter({
        'api-url': 'http://127.0.0.1:1',
        token: 't',
        'game-id': '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
        path: 'build',
        namespace: 'pr-1',
        'smoke-test': 'true',
        browser: process.execPath,
        ...values,
      }),
    ) as TargetedInputs

  async function runSmoke(
    values: Record<string, string>,
    saw: Seen | Error,
    refused?: Error,
    servedNow = published.versionId,
    tempDirRemoved = false,
  ) {
    const calls: string[] = []
    const client = {
      getNamespace: async () => ({ namespace: { version_id: servedNow } }),
      getVersion: async (_game: string, id: string) => ({
        version: { version_id: id, display_name: 'build 3' },
      }),
      setNamespaceVersion: async (_game: string, _namespace: string, version: string) => {
        calls.push(version)
        return refused ? Promise.reject(refused) : Promise.resolve({})
      },
    } as unknown as ServiceClient
    const watched: WatchOptions[] = []
    const journal: { smoke?: SmokeResult; provisioned: { namespaceId?: string; nameId?: string } } = {
      provisioned: { namespaceId: 'ns-1', nameId: 'pr-1' },
    }
    const logger = memoryLogger()
    const inputs = inputsWith(values)
    const ended = await smokeTest({
      inputs,
      // What chooseBrowser finds, not asked what it is: the watch here is a stand-in.
      browser: findBrowser({ given: inputs.smoke.browser, env: {}, platform: process.platform }),
      run: { client, signal: new AbortController().signal, clock: systemClock, timer: systemTimer },
      published,
      url: URL_,
      result: journal,
      logger,
      tempDir: '/tmp/runner',
      tempDirRemoved,
      watch: async (options) => {
        watched.push(options)
        if (saw instanceof Error) throw saw
        return saw
      },
    }).then(
      () => undefined,
      (error: unknown) => error,
    )
    return { ended, calls, watched, journal, lines: logger.lines }
  }
  const broken = seen({
    problems: [{ kind: 'exception', message: 'TypeError: boom at http://x/boot.js:1:1' }],
  })

  test('passed: nothing put back, the line logged, the screenshot in the runner temp folder', async () => {
    const { ended, calls, watched, journal, lines } = await runSmoke({}, seen())
    assert.equal(ended, undefined)
    assert.deepEqual(calls, [])
    assert.equal(journal.smoke?.status, 'passed')
    assert.match(watched[0]!.screenshotFile, /^\/tmp\/runner\/gamehost-screenshot-\d+\.png$/)
    assert.equal(watched[0]!.watchMs, 3000)
    assert.ok(
      lines.includes(
        'Smoke test: the game started in Chromium 156 in 0.4 s: 0 errors, 5 requests answered, the canvas drew',
      ),
    )
    assert.ok(lines.includes('Smoke test decided by: no problem seen, and the canvas drew (screenshot)'))
  })

  test('a watch longer than 15 s says every 15 s how the page stands and the time left at most', async () => {
    // A timer the test fires, on a clock the test moves: no wall-clock wait.
    let now = 0
    const ticks: Array<() => void> = []
    const timer: Timer = { after: (_ms, callback) => (ticks.push(callback), () => {}) }
    const logger = memoryLogger()
    const inputs = inputsWith({ 'smoke-test-seconds': '60' })
    const result: { smoke?: SmokeResult; provisioned: { namespaceId?: string; nameId?: string } } = {
      provisioned: { namespaceId: 'ns-1', nameId: 'pr-1' },
    }
    await smokeTest({
      inputs,
      browser: findBrowser({ given: inputs.smoke.browser, env: {}, platform: process.platform }),
      run: {
        client: {} as ServiceClient,
        signal: new AbortController().signal,
        clock: { now: () => now },
        timer,
      },
      published,
      url: URL_,
      result,
      logger,
      tempDir: '/tmp/runner',
      watch: async (options) => {
        now = 15_000
        ticks.shift()!()
        const live = seen()
        options.onSeen?.({ ...live, loadMs: undefined })
        now = 30_000
        ticks.shift()!()
        options.onSeen?.(live)
        now = 45_000
        ticks.shift()!()
        return live
      },
    })
    const said = logger.lines.filter((line) => line.startsWith('Smoke test: still watching'))
    assert.deepEqual(said, [
      `Smoke test: still watching ${URL_}, after 15.0 s: the browser is starting; at most 165 s left`,
      `Smoke test: still watching ${URL_}, after 30.0 s: the page has not loaded yet, 5 requests answered, 0 problems so far; at most 150 s left`,
      `Smoke test: still watching ${URL_}, after 45.0 s: loaded in 0.4 s, 5 requests answered, 0 problems so far; at most 135 s left`,
    ])
    assert.equal(ticks.length, 1, 'the next tick is cancelled, not fired')
  })

  test('the sandbox off: said, and why', async () => {
    const why = 'the runner runs as root, and Chrome refuses its sandbox to root'
    const { lines } = await runSmoke({}, seen({ sandbox: { on: false, why } }))
    assert.ok(lines.includes(`Browser sandbox off: ${why}; the page's code ran with this user's rights`))
    const on = await runSmoke({}, seen({ sandbox: { on: true } }))
    assert.ok(!on.lines.some((l) => l.includes('sandbox')))
  })

  test("the CLI's screenshot (its temp folder removed at the end): in a folder of its own under the OS's temp", async () => {
    const { watched } = await runSmoke({}, seen(), undefined, undefined, true)
    const file = watched[0]!.screenshotFile
    assert.equal(path.dirname(path.dirname(file)), os.tmpdir())
    assert.match(path.basename(path.dirname(file)), /^gamehost-smoke-\w{6}$/)
    assert.match(path.basename(file), /^gamehost-screenshot-\d+\.png$/)
    await rm(path.dirname(file), { recursive: true })
  })

  test('rollback (default): put back on the version served before, and a SmokeTestError saying so', async () => {
    const { ended, calls, journal } = await runSmoke({}, broken)
    assert.ok(ended instanceof SmokeTestError)
    assert.deepEqual(calls, ['old-version'])
    assert.equal(journal.smoke?.rolledBackTo, 'old-version')
    assert.equal(
      ended.message,
      'Smoke test: The game did not start in Chromium 156: 1 error, 5 requests answered, the canvas drew; first: ' +
        'uncaught TypeError: boom at http://x/boot.js:1:1. Fix the error it names, and check that the game runs from ' +
        "this URL (an absolute path, another host's origin). Namespace pr-1 was put back on version old-version, which it served before.",
    )
  })

  test('rollback refused: the SmokeTestError says what was tried, why it failed and what is served', async () => {
    const { ended, calls } = await runSmoke({}, broken, new Error('503 the service is down'))
    assert.ok(ended instanceof SmokeTestError)
    assert.deepEqual(calls, ['old-version'])
    assert.match(
      ended.message,
      /\. Putting the namespace back on version old-version, which it served before, failed: 503 the service is down\. It is left on version 'build 2' \(new-version\)\.$/,
    )
  })

  test("rollback after another run published: nothing is put back, and the SmokeTestError names that run's version", async () => {
    const { ended, calls, journal } = await runSmoke({}, broken, undefined, 'other-version')
    assert.ok(ended instanceof SmokeTestError)
    assert.deepEqual(calls, [])
    assert.equal(journal.smoke?.rolledBackTo, undefined)
    assert.match(
      ended.message,
      /\. It was not put back on version old-version: another run published version 'build 3' \(other-version\) meanwhile, which the namespace serves now\.$/,
    )
  })

  test("the failure's report: what a re-run does", async () => {
    const { ended } = await runSmoke({}, broken)
    assert.match(
      rerunText(undefined, ended),
      /^The namespace serves version old-version again, as before this run\. A re-run publishes this build again and opens it again: fix what the smoke test found first\.$/,
    )
  })

  test('fail: nothing put back; warn: a warning, and the run goes on', async () => {
    const failed = await runSmoke({ 'on-verify-failure': 'fail' }, broken)
    assert.deepEqual(failed.calls, [])
    assert.match(
      (failed.ended as Error).message,
      /on-verify-failure is fail: namespace pr-1 stays on version 'build 2' \(new-version\)\.$/,
    )
    const warned = await runSmoke({ 'on-verify-failure': 'warn' }, broken)
    assert.equal(warned.ended, undefined)
    assert.deepEqual(warned.calls, [])
    assert.equal(warned.journal.smoke?.status, 'failed')
    assert.ok(
      warned.lines.some((l) =>
        /^warning: Smoke test failed: Smoke test: The game did not start .* on-verify-failure is warn/.test(
          l,
        ),
      ),
    )
  })

  test('private: the credentials go to the watch (for the namespace origin only, see watch.ts)', async () => {
    const { watched } = await runSmoke({ 'basic-auth': 'reviewer:pw-12345678' }, seen())
    assert.equal(watched[0]!.basicAuth?.user, 'reviewer')
    assert.equal(watched[0]!.basicAuth?.password, 'pw-12345678')
  })

  test('no browser, or one that cannot be driven: skipped, said as a warning, never passed, nothing put back', async () => {
    const none = await runSmoke({ browser: '/no/such/chrome' }, seen())
    assert.equal(none.journal.smoke?.status, 'skipped')
    assert.equal(none.watched.length, 0)
    assert.ok(
      none.lines.includes(
        'warning: Smoke test skipped: Smoke test skipped: browser is /no/such/chrome, which is not a program this runner can run',
      ),
    )
    const broke = await runSmoke({}, new Error('Failed to launch the browser process!\nmore'))
    assert.equal(broke.ended, undefined)
    assert.equal(broke.journal.smoke?.status, 'skipped')
    assert.match(broke.journal.smoke.line, /could not be driven \(Failed to launch the browser process!\)$/)
    assert.deepEqual(broke.calls, [])
  })

  test('off: nothing is opened', async () => {
    const { watched, journal } = await runSmoke({ 'smoke-test': 'false' }, seen())
    assert.equal(watched.length, 0)
    assert.equal(journal.smoke, undefined)
  })
})

describe('the smoke-test inputs', () => {
  const base = {
    'api-url': 'http://127.0.0.1:1',
    token: 't',
    'game-id': '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
    'smoke-test': 'true',
  }
  test('it needs a namespace it publishes to, and verify on', () => {
    assert.throws(() => readInputs(getter({ ...base, path: 'build' })), UsageError)
    assert.throws(
      () => readInputs(getter({ ...base, path: 'build', namespace: 'pr-1', verify: 'false' })),
      /smoke-test runs once the URL is seen serving this build: it needs verify on/,
    )
    const inputs = readInputs(
      getter({ ...base, path: 'build', namespace: 'pr-1', 'smoke-test-seconds': '10' }),
    )
    assert.deepEqual(inputs.smoke, { enabled: true, browser: undefined, watchMs: 10_000 })
  })
  test('smoke-test-seconds is 1 to 120', () => {
    assert.throws(
      () => readInputs(getter({ ...base, path: 'b', namespace: 'pr-1', 'smoke-test-seconds': '0' })),
      UsageError,
    )
    assert.throws(
      () => readInputs(getter({ ...base, path: 'b', namespace: 'pr-1', 'smoke-test-seconds': '121' })),
      UsageError,
    )
  })
})
