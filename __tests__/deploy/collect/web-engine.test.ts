import assert from 'node:assert/strict'
import { lstat, rm, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { test } from 'node:test'
import { UsageError } from '../../../src/api/errors.ts'
import { compareGlobSpecificity, globsOverlap } from '../../../src/api/versions.ts'
import { buildManifest, contentTypeOf, type ArtifactFile } from '../../../src/deploy/collect/files.ts'
import {
  applyContentTypes,
  cdnRoutes,
  planServing,
  sameRoutes,
} from '../../../src/deploy/collect/web-engine.ts'
import { planRoutes } from '../../../src/deploy/collect/routes.ts'
import type { WebEngineChoice } from '../../../src/inputs/deploy.ts'
import type { HeaderRule } from '../../../src/inputs/headers.ts'
import { siteFiles, tempDir, writeTree } from '../../support/helpers.ts'
import { godotExport, unityBuild } from '../../support/web-builds.ts'
import { needsSymlinks } from '../../support/platform.ts'

/** Writes the files and describes them as the scan does. */
async function site(files: Record<string, string | Buffer | number>): Promise<ArtifactFile[]> {
  const root = await tempDir()
  const written = await writeTree(root, files)
  return Promise.all(
    [...written].map(async ([relative]) => {
      const absolutePath = path.join(root, relative)
      const { size, mtimeMs, dev, ino } = await lstat(absolutePath)
      const contentType = contentTypeOf(relative)
      return {
        path: relative,
        absolutePath,
        size,
        mtimeMs,
        dev,
        ino,
        ...(contentType ? { contentType } : {}),
      }
    }),
  )
}

const plan = async (
  files: Record<string, string | Buffer | number>,
  engine: WebEngineChoice = 'auto',
  headers: HeaderRule[] = [],
) => planServing(await site(files), engine, headers)

const JS = 'text/javascript; charset=utf-8'

test('a Unity build compressed with Brotli: Content-Encoding for Build/*.br, the inner files’ content types', async () => {
  const serving = await plan(unityBuild('br'))
  assert.equal(serving.builds.length, 1)
  assert.equal(serving.builds[0]!.engine, 'unity')
  assert.equal(serving.builds[0]!.summary, 'Unity WebGL build in Build/, compressed with Brotli')
  assert.match(serving.builds[0]!.evidence, /^Build\/game\.loader\.js/)
  assert.deepEqual(
    serving.contentTypes.sort((a, b) => a.path.localeCompare(b.path)),
    [
      { path: 'Build/game.data.br', contentType: 'application/octet-stream' },
      { path: 'Build/game.framework.js.br', contentType: JS },
      { path: 'Build/game.wasm.br', contentType: 'application/wasm' },
    ],
  )
  assert.deepEqual(serving.routes, [
    {
      glob: 'Build/*.br',
      priority: 100,
      header: { name: 'Content-Encoding', value: 'br' },
      from: 'web-engine',
    },
  ])
  assert.deepEqual(serving.warnings, [])
})

test('a Unity build compressed with gzip, in a folder of its own', async () => {
  const files = Object.fromEntries(Object.entries(unityBuild('gz')).map(([p, b]) => [`play/${p}`, b]))
  const serving = await plan(files)
  assert.deepEqual(
    serving.routes.map((r) => [r.glob, r.header.value]),
    [['play/Build/*.gz', 'gzip']],
  )
  assert.ok(
    serving.contentTypes.some(
      (c) => c.path === 'play/Build/game.wasm.gz' && c.contentType === 'application/wasm',
    ),
  )
})

test('an uncompressed Unity build is recognised and needs nothing', async () => {
  const serving = await plan(unityBuild('none'))
  assert.equal(serving.builds[0]?.summary, 'Unity WebGL build in Build/, not compressed')
  assert.deepEqual(serving.routes, [])
  assert.deepEqual(serving.contentTypes, [])
})

test('.unityweb files: the compression told by their first bytes', async () => {
  const gzip = await plan(unityBuild('unityweb-gzip'))
  assert.deepEqual(
    gzip.routes.map((r) => [r.glob, r.header.name, r.header.value]),
    [['Build/*.unityweb', 'Content-Encoding', 'gzip']],
  )
  assert.ok(
    gzip.contentTypes.some(
      (c) => c.path === 'Build/game.wasm.unityweb' && c.contentType === 'application/wasm',
    ),
  )
  const brotli = await plan(unityBuild('unityweb-br'))
  assert.deepEqual(
    brotli.routes.map((r) => [r.glob, r.header.value]),
    [['Build/*.unityweb', 'br']],
  )
  // Unity 2019: UnityLoader.js and <name>.json beside the .unityweb files.
  const legacy = await plan(unityBuild('legacy-unityweb'))
  assert.equal(legacy.builds[0]?.summary, 'Unity WebGL build in Build/, compressed with gzip')
  assert.match(legacy.builds[0].evidence, /^Build\/UnityLoader\.js/)
  assert.deepEqual(
    legacy.routes.map((r) => r.glob),
    ['Build/*.unityweb'],
  )
  assert.ok(
    legacy.contentTypes.some(
      (c) => c.path === 'Build/game.data.unityweb' && c.contentType === 'application/octet-stream',
    ),
  )
})

test('a Godot export with thread support: recognised, and the warning says what works', async () => {
  const serving = await plan(godotExport({ threads: true }))
  assert.equal(serving.builds.length, 1)
  assert.equal(serving.builds[0]!.engine, 'godot')
  assert.equal(serving.builds[0]!.summary, 'Godot web export index.html, with thread support')
  assert.match(serving.builds[0]!.evidence, /GODOT_THREADS_ENABLED = true in index\.html/)
  assert.deepEqual(serving.routes, [], 'no route can give both isolation headers')
  assert.equal(serving.warnings.length, 1)
  const [warning] = serving.warnings
  assert.match(warning!, /Cross-Origin-Opener-Policy: same-origin/)
  assert.match(warning!, /Cross-Origin-Embedder-Policy: require-corp/)
  assert.match(warning!, /cannot send both/)
  assert.match(warning!, /Progressive Web App > Ensure Cross Origin Isolation Headers/)
  assert.match(warning!, /Thread Support off/)
  assert.deepEqual(serving.contentTypes, [{ path: 'index.pck', contentType: 'application/octet-stream' }])
})

test('a Godot 4.0-4.2 export (no constant, a .worker.js) is a threads export too', async () => {
  const serving = await plan(godotExport({ threads: 'legacy', folder: 'web', name: 'mygame' }))
  assert.equal(serving.builds[0]?.summary, 'Godot web export web/mygame.html, with thread support')
  assert.match(serving.warnings[0]!, /web\/mygame\.worker\.js/)
})

test('a single-threaded Godot export gets no warning', async () => {
  const serving = await plan(godotExport({ threads: false }))
  assert.equal(serving.builds[0]?.summary, 'Godot web export index.html, single-threaded')
  assert.deepEqual(serving.warnings, [])
  assert.match(serving.notes[0]!, /needs no cross-origin isolation/)
})

test('a threads export whose service worker ensures the isolation headers works: a note, no warning', async () => {
  const isolated = await plan(godotExport({ threads: true, pwa: { ensureIsolation: true } }))
  assert.deepEqual(isolated.warnings, [])
  assert.match(isolated.builds[0]!.summary, /isolated by its service worker/)
  assert.match(isolated.notes[0]!, /index\.service\.worker\.js/)
  // The option off: the service worker adds nothing, the warning stands.
  const off = await plan(godotExport({ threads: true, pwa: { ensureIsolation: false } }))
  assert.match(off.warnings[0]!, /does not ensure the isolation headers/)
})

test('web-engine: none looks for nothing; a named engine that is not there fails', async () => {
  const none = await plan(unityBuild('br'), 'none')
  assert.deepEqual([none.builds, none.routes, none.contentTypes], [[], [], []])
  await assert.rejects(plan(godotExport({ threads: false }), 'unity'), (e: unknown) => {
    return (
      e instanceof UsageError && /^web-engine is unity, but no Unity WebGL build is in path/.test(e.message)
    )
  })
  await assert.rejects(
    plan(unityBuild('br'), 'godot'),
    /^UsageError: web-engine is godot, but no Godot web export/,
  )
  // Named, each only looks for its own.
  const unity = await plan(
    { ...unityBuild('br'), ...godotExport({ threads: true, folder: 'godot' }) },
    'unity',
  )
  assert.deepEqual(
    unity.builds.map((b) => b.engine),
    ['unity'],
  )
})

test('a site of no engine: nothing set', async () => {
  const serving = await plan(siteFiles(20))
  assert.deepEqual([serving.builds, serving.routes, serving.contentTypes, serving.warnings], [[], [], [], []])
})

test('headers and the engine’s routes: the more specific glob first, an overlap warned about with a file', async () => {
  const serving = await plan(unityBuild('br'), 'auto', [
    { glob: '**', name: 'X-Content-Type-Options', value: 'nosniff' },
    { glob: '**/*.html', name: 'X-Robots-Tag', value: 'noindex' },
  ])
  assert.deepEqual(
    serving.routes.map((r) => [r.glob, r.priority, r.from]),
    [
      ['Build/*.br', 100, 'web-engine'],
      ['**/*.html', 99, 'headers'],
      ['**', 98, 'headers'],
    ],
  )
  const overlaps = serving.warnings
  assert.equal(overlaps.length, 2)
  assert.match(
    overlaps.find((w) => w.includes("'Build/*.br'"))!,
    /^Routes '\*\*' \(X-Content-Type-Options, headers\) and 'Build\/\*\.br' \(Content-Encoding, web-engine\) overlap: where both match \(3 files of this site, like Build\/game\.[\w.]+\.br\), the CDN sends only Content-Encoding, from 'Build\/\*\.br', whose priority is higher \(100 > 98\)/,
  )
  assert.match(
    overlaps.find((w) => w.includes("'**/*.html'"))!,
    /1 file of this site, like index\.html/,
  )
})

test('a headers glob the same as an engine route’s replaces it, with a warning', () => {
  const { routes, warnings } = planRoutes(
    [{ glob: 'Build/*.br', header: { name: 'Content-Encoding', value: 'br' }, from: 'web-engine' }],
    [{ glob: 'Build/*.br', name: 'Cache-Control', value: 'max-age=31536000' }],
  )
  assert.deepEqual(
    routes.map((r) => [r.glob, r.header.name, r.from]),
    [['Build/*.br', 'Cache-Control', 'headers']],
  )
  assert.match(warnings[0]!, /^headers: 'Build\/\*\.br' replaces the route web-engine set for that glob/)
})

test('more than 10 routes in all fails, counting both', () => {
  const headers = Array.from({ length: 10 }, (_, i) => ({
    glob: `f${i}.html`,
    name: 'X-N',
    value: String(i),
  }))
  assert.throws(
    () =>
      planRoutes(
        [{ glob: 'Build/*.br', header: { name: 'Content-Encoding', value: 'br' }, from: 'web-engine' }],
        headers,
      ),
    (e: unknown) =>
      e instanceof UsageError &&
      /^11 routes: 10 from headers and 1 for the web engine \(Build\/\*\.br\); the CDN reads only the first 10/.test(
        e.message,
      ),
  )
})

test('content types applied, routes in the version config’s shape, compared as the service answers them', async () => {
  const files = await site(unityBuild('br'))
  const serving = await planServing(files, 'auto', [])
  applyContentTypes(files, serving)
  assert.equal(files.find((f) => f.path === 'Build/game.wasm.br')?.contentType, 'application/wasm')
  const routes = cdnRoutes(serving.routes)
  assert.deepEqual(routes, [
    {
      glob: 'Build/*.br',
      priority: 100,
      middlewares: [{ kind: { custom_headers: { headers: [{ name: 'Content-Encoding', value: 'br' }] } } }],
    },
  ])
  assert.ok(sameRoutes(structuredClone(routes), routes))
  assert.ok(!sameRoutes([], routes))
  assert.ok(!sameRoutes([{ ...routes[0]!, priority: 99 }], routes))
  // A file served with another content type than its extension's is another digest.
  const sha = files.map(() => '00')
  const plain = files.map((f) => ({ ...f, contentType: contentTypeOf(f.path) }))
  assert.notEqual(buildManifest(files, sha).digest, buildManifest(plain, sha).digest)
})

test('globs overlap where some path matches both; the more specific sorts first', () => {
  const cases: Array<[string, string, boolean]> = [
    ['**', 'Build/*.br', true],
    ['**/*.html', 'Build/*.br', false],
    ['*.html', 'index.html', true],
    ['Build/*', 'Build/x/y', false],
    ['a*', '*b', true],
    ['**/x', 'x', true],
    ['*', 'a/b', false],
    ['**.html', '**', false],
  ]
  for (const [a, b, overlap] of cases) {
    assert.equal(globsOverlap(a, b), overlap, `${a} ${b}`)
    assert.equal(globsOverlap(b, a), overlap, `${b} ${a}`)
  }
  assert.ok(compareGlobSpecificity('Build/*.br', '**') < 0)
  assert.ok(compareGlobSpecificity('index.html', '*.html') < 0)
  assert.ok(compareGlobSpecificity('**/*.html', '**') < 0)
})

test(
  'the first bytes of a file are read from the file the scan found: a link put in its place is not followed',
  { skip: needsSymlinks },
  async () => {
    const files = await site(unityBuild('unityweb-gzip'))
    const outside = path.join(await tempDir(), 'secret.txt')
    await writeFile(outside, 'not part of the site')
    const target = files.find((f) => f.path.endsWith('.unityweb'))!
    await rm(target.absolutePath)
    await symlink(outside, target.absolutePath)
    await assert.rejects(
      planServing(files, 'auto', []),
      new RegExp(
        `^Error: ${target.path.replace(/\./g, '\\.')} can no longer be opened \\(ELOOP: it became a link after it was scanned; the link is not followed\\)`,
      ),
    )
  },
)

test('a header the CDN drops on pages, on a glob of pages and other files: what reaches the browser where', () => {
  const files = ['index.html', 'levels/one.html', 'Build/game.wasm', 'style.css'].map((path) => ({ path }))
  const { warnings } = planRoutes([], [{ glob: '**', name: 'Cache-Control', value: 'max-age=60' }], files)
  assert.deepEqual(warnings, [
    "headers: '**' sets Cache-Control: max-age=60, but on pages (/, paths ending in /, and *.html: 2 files of this site, " +
      "like index.html) the CDN sends Cache-Control: no-cache, no-store in its place after the routes' headers, so pages " +
      'get Cache-Control: no-cache, no-store; only the other files it matches (2 files of this site, like Build/game.wasm) ' +
      'get Cache-Control: max-age=60',
  ])
  const csp = planRoutes([], [{ glob: '*', name: 'Content-Security-Policy', value: 'x' }], files).warnings
  assert.match(
    csp[0] ?? '',
    /on pages \(.*1 file of this site, like index\.html\) the CDN removes Content-Security-Policy .*so pages get no Content-Security-Policy; only the other files it matches \(1 file of this site, like style\.css\)/,
  )
  // A glob of no page, or a header the page layer leaves alone: nothing to say.
  assert.deepEqual(
    planRoutes([], [{ glob: 'Build/*', name: 'Cache-Control', value: 'max-age=60' }], files).warnings,
    [],
  )
  assert.deepEqual(
    planRoutes([], [{ glob: '**', name: 'X-Robots-Tag', value: 'noindex' }], files).warnings,
    [],
  )
})
