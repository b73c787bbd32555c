// The CLI's globber selects exactly what the action's (@actions/glob) does, without writing to stdout.
import assert from 'node:assert/strict'
import { mkdir, symlink } from 'node:fs/promises'
import path from 'node:path'
import { test } from 'node:test'
import { actionsGlob } from '../../src/actions/glob.ts'
import { cliGlob } from '../../src/cli/glob.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { needsSymlinks } from '../support/platform.ts'

const PATTERNS: string[][] = [
  ['**'],
  ['**/*'],
  ['*.html'],
  ['assets'],
  ['assets/'],
  ['assets/**/*.png'],
  ['**', '!assets'],
  ['**', '!**/*.map', 'js/keep.js.map'],
  ['js/*.js', '!js/b.js'],
  ['./index.html', 'a b/**'],
  ['*'],
  ['no-such-thing'],
]

test(
  'the CLI globber selects what @actions/glob selects, hidden or not, links listed and not followed',
  { skip: needsSymlinks },
  async () => {
    const root = await tempDir()
    await writeTree(root, {
      'index.html': 'i',
      'about.html': 'a',
      'a b/ü.js': 'u',
      'assets/x.png': 'x',
      'assets/deep/y.png': 'y',
      'assets/deep/z.wasm': 'z',
      'js/a.js': 'a',
      'js/b.js': 'b',
      'js/a.js.map': 'm',
      'js/keep.js.map': 'k',
      '.env': 'e',
      'assets/.cache/c': 'c',
    })
    await mkdir(path.join(root, 'empty/nested'), { recursive: true })
    await symlink('index.html', path.join(root, 'link.html'))
    await symlink('assets', path.join(root, 'assets-link'))
    const relative = (files: string[]) =>
      files.map((f) => path.relative(root, f).split(path.sep).join('/')).sort()
    for (const patterns of PATTERNS) {
      for (const includeHidden of [false, true]) {
        const expected = relative(await actionsGlob(root, patterns, includeHidden))
        const actual = relative(await cliGlob(root, patterns, includeHidden))
        assert.deepEqual(actual, expected, `${patterns.join(' ')} (include-hidden ${includeHidden})`)
      }
    }
    // Not vacuous: the patterns above select different sets.
    assert.deepEqual(relative(await cliGlob(root, ['js/*.js', '!js/b.js'], false)), ['js/a.js'])
    assert.ok((await cliGlob(root, ['**'], true)).length > (await cliGlob(root, ['**'], false)).length)
  },
)
