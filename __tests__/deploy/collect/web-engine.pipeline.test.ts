// A game's web build deployed through the pipeline to the emulator, which serves a namespace's live
// version by Host and applies its routes as the CDN does: the engine's needs (web-engine) and the
// headers input end up as content types of the site's files and routes of the published version.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ServiceClient } from '../../../src/api/client.ts'
import { createAgent } from '../../../src/api/http.ts'
import { UsageError } from '../../../src/api/errors.ts'
import { memoryLogger } from '../../../src/common/logger.ts'
import { renderText } from '../../../src/common/report.ts'
import { deploy, deployFailure, type PreviousSite } from '../../../src/deploy/pipeline.ts'
import { deployReport } from '../../../src/deploy/account.ts'
import { fetchLocally, type Emulator } from '../../../src/emulator/index.ts'
import { startTestEmulator } from '../../support/emulator.ts'
import { readInputs } from '../../../src/inputs/deploy.ts'
import { getter, siteFiles, tempDir, writeTree } from '../../support/helpers.ts'
import { WASM_BYTES, godotExport, unityBuild } from '../../support/web-builds.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const fast = { sleep: async () => {} }

describe('web builds deployed and served as their engines need', () => {
  let emulator: Emulator
  let temp: string
  let client: ServiceClient
  before(async () => {
    emulator = await startTestEmulator()
    temp = await tempDir()
    client = new ServiceClient({
      baseUrl: emulator.url,
      token: 'gamehost-demo-token',
      logger: memoryLogger(),
      dispatcher: createAgent(),
    })
  })
  after(() => emulator.close())

  const folderOf = async (files: Record<string, string | Buffer | number>) => {
    const dir = await tempDir()
    await writeTree(dir, files)
    return dir
  }
  /** Reads the inputs and deploys: a bad input is a rejection, as a failed deploy is. */
  const run = async (extra: Record<string, string>, logger = memoryLogger(), previous?: PreviousSite) => {
    const inputs = readInputs(
      getter({
        'api-url': emulator.url,
        token: 'gamehost-demo-token',
        'game-id': GAME,
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
        ...extra,
      }),
      { repository: 'studio/web-game', ref: 'refs/heads/main', sha: '0123456789abcdef' },
    )
    return deploy(inputs, { logger, tempDir: temp, retry: fast, previous })
  }
  const routesOf = async (versionId: string) =>
    (await client.getVersion(GAME, versionId)).version.config.cdn?.routes

  test('a Unity Brotli build (web-engine: auto) is served with Content-Encoding: br and the wasm content type', async () => {
    const logger = memoryLogger()
    const result = await run(
      {
        path: await folderOf(unityBuild('br')),
        namespace: 'unity-br',
        headers: '"**/*.html": {X-Robots-Tag: noindex}',
      },
      logger,
    )
    const { url } = result.published!
    assert.equal(url, `http://demo-game--unity-br.localhost:${new URL(emulator.url).port}/`)

    const wasm = await fetchLocally(`${url}Build/game.wasm.br`)
    assert.equal(wasm.status, 200)
    assert.equal(wasm.headers.get('content-encoding'), 'br')
    assert.equal(wasm.headers.get('content-type'), 'application/wasm')
    // fetch decoded it: the bytes inside are the module's.
    assert.equal(wasm.text, WASM_BYTES.toString('latin1'))
    const framework = await fetchLocally(`${url}Build/game.framework.js.br`)
    assert.equal(framework.headers.get('content-encoding'), 'br')
    assert.equal(framework.headers.get('content-type'), 'text/javascript; charset=utf-8')
    assert.equal(framework.text, 'function unityFramework(Module) {}')
    const data = await fetchLocally(`${url}Build/game.data.br`)
    assert.equal(data.headers.get('content-type'), 'application/octet-stream')
    const loader = await fetchLocally(`${url}Build/game.loader.js`)
    assert.equal(loader.headers.get('content-encoding'), null, 'the loader is not compressed')
    const page = await fetchLocally(`${url}index.html`)
    assert.equal(page.headers.get('x-robots-tag'), 'noindex')
    assert.equal(page.headers.get('content-encoding'), null)

    // The published version's routes are exactly the ones computed.
    assert.deepEqual(await routesOf(result.published!.versionId), [
      {
        glob: 'Build/*.br',
        priority: 100,
        middlewares: [{ kind: { custom_headers: { headers: [{ name: 'Content-Encoding', value: 'br' }] } } }],
      },
      {
        glob: '**/*.html',
        priority: 99,
        middlewares: [
          { kind: { custom_headers: { headers: [{ name: 'X-Robots-Tag', value: 'noindex' }] } } },
        ],
      },
    ])
    const lines = logger.lines
    assert.ok(
      lines.includes(
        'web-engine: auto: recognised a Unity WebGL build in Build/, compressed with Brotli (Build/game.loader.js)',
      ),
      lines.join('\n'),
    )
    assert.ok(
      lines.some(
        (l) =>
          l.startsWith('Content types set for the engine: ') &&
          l.includes('Build/game.wasm.br application/wasm'),
      ),
    )
    assert.ok(lines.includes('Route Build/*.br: Content-Encoding: br (priority 100, web-engine)'))
    assert.ok(lines.includes('Route **/*.html: X-Robots-Tag: noindex (priority 99, headers)'))
    assert.ok(
      lines.some((l) =>
        l.startsWith('Its routes are exactly the 2 above (Build/*.br, **/*.html), in place of'),
      ),
    )
    assert.ok(!lines.some((l) => l.startsWith('warning: ')), lines.join('\n'))

    const summary = renderText(deployReport(result))
    assert.match(summary, /Recognised +Unity WebGL build in Build\/, compressed with Brotli/)
    assert.match(summary, /Routes of the published version/)
    assert.match(summary, /Build\/game\.wasm\.br +application\/wasm/)
    assert.equal(
      result.manifest?.files.find((f) => f.path === 'Build/game.wasm.br')?.contentType,
      'application/wasm',
    )

    // The same build of a preview again: the namespace already serves its site with these routes.
    const build = await folderOf(unityBuild('br'))
    const previous = { siteId: result.siteId, uploadId: result.uploadId, digest: result.manifest.digest }
    const same = { path: build, namespace: 'unity-br', headers: '"**/*.html": {X-Robots-Tag: noindex}' }
    const again = await run(same, memoryLogger(), previous)
    assert.equal(again.skipped, true)
    assert.equal(again.published?.created, false, 'nothing to publish')
    // Other headers for the same site: a new version of it, with the new routes.
    const other = await run(
      { ...same, headers: '"**/*.html": {X-Robots-Tag: none}' },
      memoryLogger(),
      previous,
    )
    assert.equal(other.skipped, true)
    assert.equal(other.published?.created, true)
    assert.equal(
      (await routesOf(other.published.versionId))?.[1]?.middlewares[0]?.kind.custom_headers?.headers[0]
        ?.value,
      'none',
    )

    // A deploy that computes no routes keeps the base version's.
    const plainLogger = memoryLogger()
    const plain = await run({ path: await folderOf(siteFiles(8)), namespace: 'unity-br' }, plainLogger)
    assert.deepEqual(
      (await routesOf(plain.published!.versionId))?.map((r) => r.glob),
      ['Build/*.br', '**/*.html'],
    )
    assert.ok(
      plainLogger.lines.includes(
        "No routes computed (no web engine's needs, no headers): it keeps the base version's 2 routes",
      ),
      plainLogger.lines.join('\n'),
    )
  })

  test('a Godot threads export is recognised, and the log and the summary say what works', async () => {
    const logger = memoryLogger()
    const result = await run(
      { path: await folderOf(godotExport({ threads: true })), namespace: 'godot-mt' },
      logger,
    )
    assert.ok(
      logger.lines.includes(
        'web-engine: auto: recognised a Godot web export index.html, with thread support ' +
          '(index.pck, index.wasm and index.js; GODOT_THREADS_ENABLED = true in index.html)',
      ),
      logger.lines.join('\n'),
    )
    const warnings = logger.lines.filter((l) => l.startsWith('warning: '))
    assert.equal(warnings.length, 1, logger.lines.join('\n'))
    assert.match(warnings[0]!, /^warning: index\.html is a Godot web export with thread support/)
    assert.match(warnings[0]!, /this CDN cannot send both/)
    assert.match(warnings[0]!, /Ensure Cross Origin Isolation Headers on/)
    assert.match(warnings[0]!, /Variant > Thread Support off/)
    const summary = renderText(deployReport(result))
    assert.match(summary, /Warning: index\.html is a Godot web export with thread support/)
    assert.match(summary, /Ensure Cross Origin Isolation Headers/)
    // No route could help: the page goes out without the isolation headers.
    const page = await fetchLocally(`${result.published!.url}index.html`)
    assert.equal(page.status, 200)
    assert.equal(page.headers.get('cross-origin-opener-policy'), null)
  })

  test('a single-threaded Godot export gets no warning', async () => {
    const logger = memoryLogger()
    const result = await run(
      { path: await folderOf(godotExport({ threads: false })), namespace: 'godot-st' },
      logger,
    )
    assert.ok(result.published?.url)
    assert.ok(!logger.lines.some((l) => l.startsWith('warning: ')), logger.lines.join('\n'))
    assert.ok(
      logger.lines.some((l) => /index\.html is single-threaded: it needs no cross-origin isolation/.test(l)),
    )
    assert.doesNotMatch(renderText(deployReport(result)), /Warning:/)
    const pack = await fetchLocally(`${result.published.url}index.pck`)
    assert.equal(pack.headers.get('content-type'), 'application/octet-stream')
  })

  test('a dry run says which routes the version would have', async () => {
    const logger = memoryLogger()
    const result = await run(
      { path: await folderOf(unityBuild('gz')), namespace: 'unity-dry', 'dry-run': 'true', token: '' },
      logger,
    )
    assert.equal(result.siteId, undefined)
    assert.ok(logger.lines.includes('Route Build/*.gz: Content-Encoding: gzip (priority 100, web-engine)'))
    assert.ok(logger.lines.some((l) => l.includes('with exactly the 1 route above in place of its routes')))
    assert.match(renderText(deployReport(result)), /Routes the published version would have/)
  })

  const badHeaders: Array<[string, string, RegExp]> = [
    [
      'two headers for one glob',
      '"**/*.html": {Cache-Control: no-cache, X-Frame-Options: DENY}',
      /has 2 headers/,
    ],
    ['bad YAML', '"**/*.html": [Cache-Control', /^headers is not valid YAML/],
    [
      'a bad glob',
      '"**.wasm": {Cache-Control: no-cache}',
      /^headers: '\*\*\.wasm' is not a glob the service takes/,
    ],
    ['a value too long', `"*.html": {X-Note: "${'a'.repeat(1100)}"}`, /has a value of 1100 bytes/],
    [
      'too many routes with the engine’s',
      Array.from({ length: 10 }, (_, i) => `"level-${i}.html": {X-Robots-Tag: noindex}`).join('\n'),
      /^11 routes: 10 from headers and 1 for the web engine \(Build\/\*\.br\)/,
    ],
  ]
  for (const [name, headers, message] of badHeaders) {
    test(`bad headers fail before anything is created: ${name}`, async () => {
      const path = await folderOf(unityBuild('br'))
      const before = emulator.requests.length
      const sites = emulator.sites(GAME).length
      const thrown = await run({ path, namespace: 'bad-headers', headers }).catch((e: unknown) => e)
      const { error, partial } = deployFailure(thrown)
      assert.ok(error instanceof UsageError, String(error))
      assert.match(error.message, message)
      assert.equal(partial, undefined, 'it failed before anything was sent')
      const sent = emulator.requests.slice(before)
      assert.deepEqual(
        sent.filter((r) => r.method === 'POST' && r.path.endsWith('/cdn/sites')),
        [],
        'no request reached createCdnSite',
      )
      assert.deepEqual(sent, [], 'nothing at all reached the service')
      assert.equal(emulator.sites(GAME).length, sites)
    })
  }
})
