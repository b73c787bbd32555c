// The collect stage's warning for a path with no index.html at its root, said before anything is
// created, with what the folder looks like.
import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { memoryLogger } from '../../src/common/logger.ts'
import { collectSite } from '../../src/deploy/collect.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { godotExport, unityBuild } from '../support/web-builds.ts'
import { UsageError } from '../../src/api/errors.ts'

const collect = async (root: string) => {
  const logger = memoryLogger()
  const site = await collectSite(
    { path: root, files: ['**'], includeHidden: false, webEngine: 'auto', headers: [] },
    { logger, digestFirst: false, publish: true },
  )
  return { warnings: site.serving.warnings, lines: logger.lines }
}

test("path at Unity's inner Build/ folder: a warning that the site is its parent", async () => {
  const root = await tempDir()
  await writeTree(root, unityBuild('br'))
  const build = path.join(root, 'Build')
  const { warnings, lines } = await collect(build)
  const expected =
    `path '${build}' has no index.html at its root, so the site's / answers 404: it looks like the Build/ folder ` +
    'inside a Unity WebGL build (game.data.br, game.framework.js.br, game.loader.js). The site is its parent ' +
    `folder, which holds index.html and Build/: give path: ${root}`
  assert.equal(warnings[0], expected)
  assert.ok(lines.includes(`warning: ${expected}`), lines.join('\n'))
  // The parent itself: no such warning.
  assert.ok(!(await collect(root)).warnings.some((w) => w.includes('no index.html')))
})

test('a site one folder down, or none at all: said as such', async () => {
  const root = await tempDir()
  await writeTree(root, { 'dist/index.html': '<p>hi', 'dist/app.js': '1', 'README.md': 'x' })
  assert.match(
    (await collect(root)).warnings[0] ?? '',
    new RegExp(
      `its page is in dist/ \\(dist/index\\.html\\); if that is the site, give path: ${path.join(root, 'dist').replace(/[/\\]/g, '.')}$`,
    ),
  )
  const flat = await tempDir()
  await writeTree(flat, { 'app.js': '1', 'style.css': 'x' })
  assert.match(
    (await collect(flat)).warnings[0] ?? '',
    /has no index\.html at its root, so the site's \/ answers 404: its files are served only at their own paths$/,
  )
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
