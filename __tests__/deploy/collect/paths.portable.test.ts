// Paths and patterns use `/` on every platform: the manifest's paths are `/`-separated whatever the
// platform's separator (Windows' rules exercised here with path.win32), and `\` in a pattern is a
// separator on every runner, as it is on Windows, for the one globber of the action and the CLI.
import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { memoryLogger } from '../../../src/common/logger.ts'
import { sitePattern } from '../../../src/deploy/collect/glob.ts'
import { relativeSitePath } from '../../../src/deploy/collect/walk.ts'
import { scanArtifacts, tempDir, writeTree } from '../../support/helpers.ts'

test('a site path is `/`-separated with Windows path rules', () => {
  const root = 'C:\\work\\game\\build'
  assert.equal(
    relativeSitePath(root, 'C:\\work\\game\\build\\Build\\game.wasm', path.win32),
    'Build/game.wasm',
  )
  assert.equal(relativeSitePath(root, 'C:\\work\\game\\build\\index.html', path.win32), 'index.html')
  // A root written otherwise (drive letter's case, trailing separator) goes through path.relative.
  assert.equal(
    relativeSitePath('c:\\work\\game\\build\\', 'C:\\work\\game\\build\\a\\b.js', path.win32),
    'a/b.js',
  )
})

test('a site path is unchanged with POSIX path rules, `\\` in a name kept as part of it', () => {
  assert.equal(relativeSitePath('/w/build', '/w/build/Build/game.wasm', path.posix), 'Build/game.wasm')
  assert.equal(relativeSitePath('/w/build', '/w/build/odd\\name.txt', path.posix), 'odd\\name.txt')
})

test('`\\` in a pattern is a separator on every platform', () => {
  assert.equal(sitePattern('Build\\*.wasm'), 'Build/*.wasm')
  assert.equal(sitePattern('!assets\\raw\\**'), '!assets/raw/**')
  assert.equal(sitePattern('assets/[*].png'), 'assets/[*].png')
})

test('the globber selects with `\\` as a separator, here as on Windows', async () => {
  const root = await tempDir()
  await writeTree(root, {
    'Build/game.wasm': 'w',
    'Build/game.js': 'j',
    'index.html': '<html>',
    'raw/x.psd': 'p',
  })
  const scanned = await scanArtifacts({
    root,
    patterns: ['Build\\*.wasm', 'index.html', 'raw', '!raw\\x.psd'],
    includeHidden: false,
    logger: memoryLogger(),
  })
  assert.deepEqual(scanned.map((f) => f.path).sort(), ['Build/game.wasm', 'index.html'])
})
