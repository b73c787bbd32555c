// A path with no index.html at its root (its / would answer 404) is refused before anything is
// created, naming the folder to give instead; require-index: false deploys it all the same.
import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { memoryLogger } from '../../../src/common/logger.ts'
import { collectSite } from '../../../src/deploy/collect/collect.ts'
import { tempDir, writeTree } from '../../support/helpers.ts'
import { godotExport, unityBuild } from '../../support/web-builds.ts'
import { UsageError } from '../../../src/api/errors.ts'

const collect = async (root: string, requireIndex?: boolean) => {
  const logger = memoryLogger()
  const site = await collectSite(
    { path: root, files: ['**'], includeHidden: false, webEngine: 'auto', headers: [], requireIndex },
    { logger, digestFirst: false, publish: true },
  )
  return { warnings: site.serving.warnings, lines: logger.lines, files: site.files }
}

/** The refusal's message, asserting it is the usage error raised before anything is created. */
const refusal = async (root: string): Promise<string> => {
  let message = ''
  await assert.rejects(collect(root), (error: unknown) => {
    assert.ok(error instanceof UsageError, String(error))
    message = error.message
    return true
  })
  return message
}

test("path at Unity's inner Build/ folder: refused, naming its parent", async () => {
  const root = await tempDir()
  await writeTree(root, unityBuild('br'))
  const build = path.join(root, 'Build')
  assert.equal(
    await refusal(build),
    `path '${build}' has no index.html at its root, so the site's / would answer 404: it looks like the Build/ folder ` +
      'inside a Unity WebGL build (game.data.br, game.framework.js.br, game.loader.js). The site is its parent ' +
      `folder, which holds index.html and Build/: give path: ${root}`,
  )
  // The parent itself: collected, no word of index.html.
  const parent = await collect(root)
  assert.ok(!parent.warnings.some((w) => w.includes('index.html')))
  assert.ok(!parent.lines.some((l) => l.includes('no index.html')))
})

test('a site one folder down, or none at all: refused as such, with require-index: false named', async () => {
  const root = await tempDir()
  await writeTree(root, { 'dist/index.html': '<p>hi', 'dist/app.js': '1', 'README.md': 'x' })
  assert.equal(
    await refusal(root),
    `path '${root}' has no index.html at its root, so the site's / would answer 404: its page is in dist/ ` +
      `(dist/index.html); if that is the site, give path: ${path.join(root, 'dist')}; ` +
      'a site that is no page (an asset host) sets require-index: false',
  )
  const flat = await tempDir()
  await writeTree(flat, { 'app.js': '1', 'style.css': 'x' })
  assert.equal(
    await refusal(flat),
    `path '${flat}' has no index.html at its root, so the site's / would answer 404: give the folder that ` +
      "holds the game's index.html; a site that is no page (an asset host) sets require-index: false",
  )
})

test('Index.html or index.htm alone: refused, naming the file and how its name differs', async () => {
  const caseSensitive = ', and file names are case-sensitive'
  for (const [name, why] of [
    ['Index.html', `only in case: the site's / is served from index.html alone${caseSensitive}`],
    ['INDEX.HTM', `in case and ending: the site's / is served from index.html alone${caseSensitive}`],
    ['index.htm', "in its ending: the site's / is served from index.html alone"],
  ] as const) {
    const root = await tempDir()
    await writeTree(root, { [name]: '<p>hi', 'app.js': '1' })
    assert.equal(
      await refusal(root),
      `path '${root}' has no index.html at its root, so the site's / would answer 404: it holds ${name}, ` +
        `whose name differs from index.html ${why}; rename ${name} to index.html`,
    )
  }
})

test('require-index: false deploys a site with no page, without a warning', async () => {
  const flat = await tempDir()
  await writeTree(flat, { 'app.js': '1', 'style.css': 'x' })
  const { warnings, files } = await collect(flat, false)
  assert.deepEqual(
    files.map((f) => f.path),
    ['app.js', 'style.css'],
  )
  assert.deepEqual(warnings, [])
})

test('fail-on-warning: a Godot threads export fails before anything is created, naming the warning; without it, a warning', async () => {
  const root = await tempDir()
  await writeTree(root, godotExport({ threads: true, pwa: { ensureIsolation: false } }))
  const source = { path: root, files: ['**'], includeHidden: false, webEngine: 'auto' as const, headers: [] }
  const options = { logger: memoryLogger(), digestFirst: false, publish: true }
  const warned = await collectSite(source, options)
  assert.ok(
    warned.serving.warnings.some((w) => /Godot/.test(w)),
    warned.serving.warnings.join('\n'),
  )
  await assert.rejects(
    collectSite({ ...source, failOnWarning: true }, { ...options, logger: memoryLogger() }),
    (error: unknown) => {
      assert.ok(error instanceof UsageError, String(error))
      assert.match(
        error.message,
        /^fail-on-warning: the site drew a warning, so nothing was created: .*Godot/,
      )
      return true
    },
  )
})
