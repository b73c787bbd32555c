// The engine's own word that its game started (issue 46), in the machine's Chrome or Chromium: a
// Unity-shaped and a Godot-shaped test game (support/engine-games.ts) that draw only once their
// engine's promise resolves pass, and the account says the engine said it started, with which WebGL;
// one resolving after the watch's first seconds is waited for; one whose promise rejects, or never
// settles, fails naming it; one that starts without WebGL fails. And WebGL2 really renders with the
// smoke test's flags: a page that draws only with WebGL2, and throws when getContext('webgl2') is
// null, passes. Served from 127.0.0.1; without a browser, skipped.
import assert from 'node:assert/strict'
import type { Server } from 'node:http'
import { after, before, describe, test } from 'node:test'
import { findBrowser } from '../../src/deploy/smoke/browser.ts'
import { godotGame, unityGame, webgl2Page } from '../support/engine-games.ts'
import { servePages, smokeOf } from '../support/smoke-page.ts'

const browser = findBrowser({ env: process.env, platform: process.platform })
const noBrowser = 'missing' in browser ? browser.missing : undefined
const browserPath = (browser as { path: string }).path

/** A guard, not the measure. */
const BOUND = { timeout: 60_000 }

/** The test pages draw their first frame this long after the page asked the engine to start. */
const LATE_MS = 2500

describe("the engine's word that the game started", { skip: noBrowser }, () => {
  let server: Server
  let origin: string
  before(async () => {
    ;({ server, origin } = await servePages({
      // Resolved after the watch's 2 s: only a watch that waits for the engine sees it drawn.
      ...unityGame('/unity/', { delayMs: LATE_MS }),
      ...unityGame('/unity-rejects/', {
        rejects: 'Unable to parse Build/game.framework.js.br! The file is corrupt',
      }),
      ...unityGame('/unity-2d/', { context: '2d' }),
      ...godotGame('/godot/', { delayMs: 300 }),
      ...godotGame('/godot-rejects/', {
        rejects: 'Couldn\'t load project data at path "game.pck". Is the .pck file missing?',
      }),
      ...godotGame('/godot-never/', { never: true }),
      '/webgl2/': webgl2Page,
    }))
  })
  after(() => {
    server?.closeAllConnections()
    server?.close()
  })

  test(
    'Unity: createUnityInstance resolving after the first seconds of the watch is waited for, and said: passed',
    BOUND,
    async () => {
      const { smoke, lines } = await smokeOf(`${origin}/unity/`, browserPath)
      assert.equal(smoke.status, 'passed', lines.join('\n'))
      assert.match(
        smoke.line,
        /: Unity said it started \(createUnityInstance resolved at \d+\.\d s, WebGL2\), 0 errors, .* the canvas drew \(WebGL2\)$/,
      )
      const resolvedAt = Number(/resolved at (\d+\.\d) s/.exec(smoke.line)![1])
      assert.ok(resolvedAt * 1000 >= LATE_MS, `resolved at ${resolvedAt} s`)
      assert.ok(
        lines.includes(
          `Smoke test decided by: ${/Unity said it started \([^)]*\)/.exec(smoke.line)![0]}, no problem seen, and the canvas drew (screenshot)`,
        ),
        lines.join('\n'),
      )
    },
  )

  test("Godot: engine.startGame resolved, drawn with WebGL2: passed, Godot's word said", BOUND, async () => {
    const { smoke, lines } = await smokeOf(`${origin}/godot/`, browserPath)
    assert.equal(smoke.status, 'passed', lines.join('\n'))
    assert.match(
      smoke.line,
      /: Godot said it started \(engine\.startGame resolved at \d+\.\d s, WebGL2\), 0 errors/,
    )
  })

  test('Unity: createUnityInstance rejects: failed, the rejection named', BOUND, async () => {
    const { smoke, lines } = await smokeOf(`${origin}/unity-rejects/`, browserPath)
    assert.equal(smoke.status, 'failed', lines.join('\n'))
    assert.match(
      smoke.line,
      /first: Unity did not start: createUnityInstance rejected \(Unable to parse Build\/game\.framework\.js\.br! The file is corrupt\)$/,
    )
    assert.ok(lines.includes("Smoke test decided by: Unity's start: its promise rejected"), lines.join('\n'))
    assert.match(smoke.remedy!, /^a compressed file reached the browser without its Content-Encoding/)
  })

  test('Godot: engine.startGame rejects: failed, the rejection named', BOUND, async () => {
    const { smoke, lines } = await smokeOf(`${origin}/godot-rejects/`, browserPath)
    assert.equal(smoke.status, 'failed', lines.join('\n'))
    assert.match(
      smoke.line,
      /first: Godot did not start: engine\.startGame rejected \(Error: Couldn't load project data at path "game\.pck"\. Is the \.pck file missing\?\)$/,
    )
  })

  test('Godot: engine.startGame never settles: failed when the watch ends, said so', BOUND, async () => {
    const { smoke, lines } = await smokeOf(`${origin}/godot-never/`, browserPath)
    assert.equal(smoke.status, 'failed', lines.join('\n'))
    assert.match(
      smoke.line,
      /first: Godot did not say it started: engine\.startGame had not resolved when the watch ended$/,
    )
    assert.match(
      smoke.remedy!,
      /^if the game takes longer than 4\.0 s after its page loaded to start, raise smoke-test-seconds/,
    )
  })

  test('Unity: resolved, but drawn without WebGL: failed, no WebGL context said', BOUND, async () => {
    const { smoke, lines } = await smokeOf(`${origin}/unity-2d/`, browserPath)
    assert.equal(smoke.status, 'failed', lines.join('\n'))
    assert.match(
      smoke.line,
      /first: Unity said it started \(createUnityInstance resolved\), but no WebGL context was created$/,
    )
  })

  test(
    'WebGL2 really renders: a page that draws only with WebGL2 passes, drawn (WebGL2)',
    BOUND,
    async () => {
      const { smoke, lines } = await smokeOf(`${origin}/webgl2/`, browserPath)
      assert.equal(smoke.status, 'passed', lines.join('\n'))
      assert.match(smoke.line, /: 0 errors, .* the canvas drew \(WebGL2\)$/)
    },
  )
})
