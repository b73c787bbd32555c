// The smoke test through dist/index.js against the emulator at its defaults, in the machine's Chrome or
// Chromium (Debian's chromium in CI, which .ci/run installs): a small game that streams and
// instantiates its .wasm and draws with WebGL2 passes, saying Unity said it started, and its screenshot
// is not one flat colour; the same game with its framework served without its Content-Encoding, with a
// file its loader needs left out by `files`, and with a script that throws each fails naming the cause,
// and is rolled back; a private preview is opened with its credentials. Without a browser, every test
// here says skipped; a `browser` that is not a Chrome is refused before anything is created.
import assert from 'node:assert/strict'
import { readFile, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { after, before, describe, test, type TestContext } from 'node:test'
import { fetchLocally, startEmulator, type Emulator } from '../../src/emulator/index.ts'
import { findBrowser } from '../../src/deploy/smoke/browser.ts'
import { countColours } from '../../src/deploy/smoke/in-page.ts'
import { launchArgs } from '../../src/deploy/smoke/launch.ts'
import { actionDefaults, runAction, type ActionRun } from '../../scripts/run-action.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { smokeGame, type SmokeGameOptions } from '../support/smoke-game.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'

/** The seed's version 1.0.0: no routes. */
const SEED_VERSION = '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53'
const browser = findBrowser({ env: process.env, platform: process.platform })
const noBrowser = 'missing' in browser ? browser.missing : undefined

/** Distinct colours of a PNG's pixels, counted by the browser as the smoke test counts a page's. */
async function pngColours(file: string): Promise<number> {
  const { default: puppeteer } = await import('puppeteer-core')
  const chrome = await puppeteer.launch({
    executablePath: (browser as { path: string }).path,
    headless: true,
    pipe: true,
    // The test's own PNG, not a build's page: no sandbox needed, and none as root.
    args: launchArgs({ sandbox: false }),
  })
  try {
    return (await countColours(chrome, await readFile(file), undefined)).page.colours
  } finally {
    await chrome.close()
  }
}

describe('dist/index.js: the smoke test in a real browser', { skip: noBrowser }, () => {
  let emulator: Emulator
  let defaults: Record<string, string>
  before(async () => {
    emulator = await startEmulator({ rateLimit: false })
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(async () => {
    await emulator?.close()
  })

  const game = async (options: SmokeGameOptions = {}) => {
    const dir = await tempDir()
    await writeTree(dir, smokeGame(options))
    return dir
  }
  // At the emulator's defaults: no cdn-domain (the service's own), a publish reaching the host 3 s later.
  const deploy = (inputs: Record<string, string>, env?: Record<string, string>): Promise<ActionRun> =>
    runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      env,
      inputs: {
        'api-url': emulator.url,
        token: TOKEN,
        'game-id': GAME,
        comment: 'false',
        'smoke-test': 'true',
        ...inputs,
      },
    })
  const liveVersion = (nameId: string) =>
    emulator.namespaces(GAME).find((n) => n.nameId === nameId)!.versionId

  /** A namespace serving the good game, then `inputs` deployed to it: failed, named, and rolled back. */
  async function failsAndRollsBack(
    t: TestContext,
    nameId: string,
    bad: { path: string } & Record<string, string>,
    cause: RegExp,
  ): Promise<ActionRun> {
    const good = await deploy({ path: await game(), namespace: nameId })
    assert.equal(good.exitCode, 0, good.stdout)
    assert.equal(good.outputs['smoke-test'], 'passed', good.stdout)
    const run = await deploy({ namespace: nameId, ...bad })
    t.diagnostic(run.stdout.split('\n').find((l) => l.startsWith('::error::')) ?? '(no error line)')
    assert.equal(run.exitCode, 1, run.stdout)
    assert.equal(run.outputs.verified, 'true', 'the host served the build: seen live')
    assert.equal(run.outputs['smoke-test'], 'failed')
    const error = run.stdout.split('\n').find((l) => l.startsWith('::error::'))!
    assert.match(error, /^::error::Smoke test: The game did not start in (Chromium|Chrome) \d+: /)
    assert.match(error, cause)
    assert.match(
      error,
      new RegExp(
        `Namespace ${nameId} was put back on version ${good.outputs['version-id']}, which it served before\\.$`,
      ),
    )
    assert.equal(liveVersion(nameId), good.outputs['version-id'], 'rolled back')
    assert.match(run.summary, /Smoke test.*did not start/)
    return run
  }

  test('the game starts: passed, one line, and a screenshot that is not one flat colour', async () => {
    // A RUNNER_TEMP that outlives the run, to read the screenshot after it.
    const runnerTemp = await tempDir()
    const run = await deploy({ path: await game(), namespace: 'smoke-good' }, { RUNNER_TEMP: runnerTemp })
    assert.equal(run.exitCode, 0, run.stdout)
    assert.equal(run.outputs['smoke-test'], 'passed')
    assert.match(
      run.stdout,
      /^Smoke test: the game started in (Chromium|Chrome) \d+ in \d+\.\d s: Unity said it started \(createUnityInstance resolved at \d+\.\d s, WebGL2\), 0 errors, 5 requests answered, the canvas drew \(WebGL2\)$/m,
    )
    assert.match(run.stdout, /^Smoke test decided by: Unity said it started \(createUnityInstance resolved/m)
    if (process.platform === 'linux' && process.geteuid?.() === 0)
      assert.match(
        run.stdout,
        /^Browser sandbox off: the runner runs as root, and Chrome refuses its sandbox to root;/m,
      )
    const screenshot = run.outputs.screenshot!
    assert.equal(path.dirname(screenshot), runnerTemp)
    assert.match(screenshot, /gamehost-screenshot-\d+\.png$/)
    assert.match(run.stdout, new RegExp(`^Screenshot: ${screenshot.replace(/[.]/g, '\\.')}$`, 'm'))
    // The page's white, the game's background, its orange rectangle and its data bar.
    assert.ok((await pngColours(screenshot)) > 2, 'the screenshot shows what the game drew')
    assert.match(run.summary, /Smoke test.*the game started in/)
  })

  test('the framework served without its Content-Encoding: failed, the compressed script named, rolled back', async (t) => {
    await failsAndRollsBack(
      t,
      'smoke-encoding',
      // No routes of its own (web-engine none) on a version that has none (the seed's 1.0.0).
      { path: await game(), 'web-engine': 'none', 'version-id': SEED_VERSION },
      /first: uncaught SyntaxError: .* at http:\/\/\S+\/Build\/game\.framework\.js\.gz:1:1\. A compressed file reached the browser without its Content-Encoding/,
    )
  })

  test('a file the loader needs left out by files: failed, its URL and 404 named, rolled back', async (t) => {
    await failsAndRollsBack(
      t,
      'smoke-missing',
      { path: await game(), files: '**\n!Build/game.data.gz' },
      /first: http:\/\/\S+\/Build\/game\.data\.gz answered 404\. The page asks for a file the site does not have: check that the files patterns select it/,
    )
  })

  test('a script that throws: failed, the error and its file named, rolled back', async (t) => {
    const run = await failsAndRollsBack(
      t,
      'smoke-throws',
      { path: await game({ throws: true }) },
      /first: uncaught TypeError: Cannot read properties of undefined \(reading 'start'\) at http:\/\/\S+\/TemplateData\/boot\.js:1:\d+\. Fix the error it names/,
    )
    assert.ok((await fetchLocally(run.outputs.url!)).text.includes('Smoke game'))
  })

  test('a private preview is opened with its credentials, which no output holds', async () => {
    const password = 'smoke-preview-s3cret'
    const run = await deploy({
      path: await game(),
      namespace: 'smoke-private',
      'basic-auth': `reviewer:${password}`,
    })
    assert.equal(run.exitCode, 0, run.stdout)
    assert.equal(run.outputs['smoke-test'], 'passed', run.stdout)
    assert.equal((await fetchLocally(run.outputs.url!)).status, 401, 'private to anyone without them')
    assertHidden(run, password)
  })

  test("a private preview's credentials never reach another host: one on the runner is not even connected to", async () => {
    // The guard refuses a host of the runner's network before any connection, so this other host
    // (which would challenge for credentials) is never asked; another origin on the internet is only
    // answered CancelAuth (watch.ts's answerAuth), which this test cannot reach.
    const password = 'smoke-preview-s3cret'
    const asked: Array<string | undefined> = []
    const other = createServer((req, res) => {
      asked.push(req.headers.authorization)
      res.writeHead(401, { 'www-authenticate': 'Basic realm="other"' })
      res.end()
    })
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
    try {
      // A page the game leaves for: a navigation, which (unlike a cross-origin subresource) Chrome
      // lets a host challenge for credentials.
      const port = (other.address() as AddressInfo).port
      const run = await deploy({
        path: await game({ leavesFor: `http://127.0.0.1:${port}/lobby.html` }),
        namespace: 'smoke-private2',
        'basic-auth': `reviewer:${password}`,
        'on-verify-failure': 'warn',
      })
      assert.match(
        run.stdout,
        new RegExp(
          `^Smoke test: .*, \\d connections? to the runner's network refused \\(127\\.0\\.0\\.1:${port} loopback\\)`,
          'm',
        ),
      )
      assert.deepEqual(asked, [], 'the other host saw no request')
      assertHidden(run, password)
    } finally {
      other.close()
    }
  })

  /** No log line, output or summary holds the password. */
  function assertHidden(run: ActionRun, password: string): void {
    const shown = [run.stdout, run.stderr, JSON.stringify(run.outputs), run.summary]
      .join('\n')
      .split('\n')
      .filter((line) => !line.startsWith('::add-mask::'))
      .join('\n')
    for (const secret of [password, Buffer.from(`reviewer:${password}`).toString('base64')])
      assert.ok(!shown.includes(secret), 'the password is shown')
  }

  test('on-verify-failure warn: the run succeeds, says so, and the namespace keeps the build', async () => {
    const run = await deploy({
      path: await game({ throws: true }),
      namespace: 'smoke-warn',
      'on-verify-failure': 'warn',
    })
    assert.equal(run.exitCode, 0, run.stdout)
    assert.equal(run.outputs['smoke-test'], 'failed')
    assert.match(
      run.stdout,
      /^::warning title=Smoke test failed::Smoke test: The game did not start .* on-verify-failure is warn/m,
    )
    assert.equal(liveVersion('smoke-warn'), run.outputs['version-id'])
  })

  test('one console.error of 3 MB: its log line, summary and outputs stay small, and say it was cut', async () => {
    const run = await deploy({
      path: await game({ loud: true }),
      namespace: 'smoke-loud',
      'on-verify-failure': 'warn',
    })
    assert.equal(run.exitCode, 0, run.stdout.slice(0, 5000))
    assert.equal(run.outputs['smoke-test'], 'failed')
    const longest = Math.max(...run.stdout.split('\n').map((line) => line.length))
    assert.ok(longest < 2000, `a line of the log is ${longest} characters`)
    assert.match(
      run.stdout,
      /^::warning title=Smoke test failed::.*: 1 error, .*E{300}… \(3,145,728 characters\)/m,
    )
    assert.ok(run.summary.length < 20_000, `the summary is ${run.summary.length} characters`)
    assert.match(run.summary, /3,145,728 characters/)
    const outputs = JSON.stringify(run.outputs).length
    assert.ok(outputs < 5000, `the outputs are ${outputs} characters`)
  })
})

describe('dist/index.js: no browser to be had', () => {
  test('the smoke test says skipped, never passed, and the deploy succeeds', async () => {
    const emulator = await startEmulator({ rateLimit: false })
    try {
      const dir = await tempDir()
      await writeTree(dir, { 'index.html': '<title>no browser</title>' })
      const run = await runAction({
        entry: path.join(root, 'dist/index.js'),
        defaults: await actionDefaults(path.join(root, 'action.yml')),
        cwd: root,
        inputs: {
          'api-url': emulator.url,
          token: TOKEN,
          'game-id': GAME,
          comment: 'false',
          path: dir,
          namespace: 'smoke-nobrowser',
          'smoke-test': 'true',
          browser: path.join(dir, 'no-such-chrome'),
        },
      })
      assert.equal(run.exitCode, 0, run.stdout)
      assert.equal(run.outputs['smoke-test'], 'skipped')
      assert.equal(run.outputs.screenshot, '')
      assert.match(
        run.stdout,
        /^::warning title=Smoke test skipped::Smoke test skipped: browser is \S+no-such-chrome, which is not a program this runner can run$/m,
      )
    } finally {
      await emulator.close()
    }
  })
})

describe(
  'dist/index.js: a browser that is not a Chrome',
  { skip: process.platform === 'win32' && 'a shell script' },
  () => {
    test('refused before anything is created, what it is named, the run failed', async () => {
      const emulator = await startEmulator({ rateLimit: false })
      try {
        const dir = await tempDir()
        await writeTree(dir, { 'index.html': '<title>not a browser</title>' })
        const script = path.join(dir, 'not-chrome.sh')
        await writeFile(script, '#!/bin/sh\necho "Mozilla Firefox 128.0"\n', { mode: 0o755 })
        const run = await runAction({
          entry: path.join(root, 'dist/index.js'),
          defaults: await actionDefaults(path.join(root, 'action.yml')),
          cwd: root,
          inputs: {
            'api-url': emulator.url,
            token: TOKEN,
            'game-id': GAME,
            comment: 'false',
            path: dir,
            namespace: 'smoke-notchrome',
            'smoke-test': 'true',
            browser: script,
          },
        })
        assert.equal(run.exitCode, 1, run.stdout)
        assert.match(
          run.stdout,
          /^::error::browser is \S+not-chrome\.sh, which is not Chrome or Chromium: it answers --version with "Mozilla Firefox 128\.0"\./m,
        )
        assert.equal(run.outputs['site-id'] ?? '', '')
        assert.deepEqual(emulator.requests, [], 'no call was made to the service')
      } finally {
        await emulator.close()
      }
    })
  },
)
