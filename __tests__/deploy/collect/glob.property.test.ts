// The walk's selection against @actions/glob's over generated pattern lists: stars, classes (POSIX
// ones too), globstars, exclusions and folder patterns, in every order, on a tree with hidden files,
// spaces, non-ASCII and names that differ only in case.
import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import * as actionsGlob from '@actions/glob'
import fc from 'fast-check'
import { walkSite } from '../../../src/deploy/collect/walk.ts'
import { tempDir, writeTree } from '../../support/helpers.ts'
import { runSettings } from '../../properties/steps.ts'

const TREE = [
  'index.html',
  'about.htm',
  'a b/ü.js',
  'a b/c d.txt',
  'assets/x.png',
  'assets/deep/y.png',
  'assets/deep/deep/z.wasm',
  'assets/.cache/c',
  'js/a.js',
  'js/B.js',
  'js/a.js.map',
  'js/ab.js',
  'js/]x.js',
  '.env',
  '9lives/1.txt',
]

const SEGMENTS = [
  ...['**', '*', '?', '.', 'js', 'assets', 'deep', 'a b', 'ü.js', '.cache', '9lives'],
  ...['*.js', 'a*', '*a*', '?.js', '*.??', '[ab].js', '[!a]*', '[^a-c]*', '[a-c]*', '[]x]*', '[B-a]*'],
  ...['[[:alpha:]]*', '*.[[:lower:]]*', '[[:digit:]]*', '[[:upper:][:punct:]]*', '[[:space:]]*'],
]

const pattern = fc
  .record({
    exclude: fc.boolean(),
    segments: fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 3 }),
    folder: fc.boolean(),
  })
  .map(({ exclude, segments, folder }) => `${exclude ? '!' : ''}${segments.join('/')}${folder ? '/' : ''}`)

/** @actions/glob's selection, as the action's globber asked it before (links listed, not followed). */
async function actionsSelection(root: string, patterns: string[], includeHidden: boolean) {
  const globber = await actionsGlob.create(
    patterns
      .map((p) => (p.startsWith('!') ? `!${path.join(root, p.slice(1))}` : path.join(root, p)))
      .join('\n'),
    {
      matchDirectories: false,
      followSymbolicLinks: false,
      implicitDescendants: true,
      excludeHiddenFiles: !includeHidden,
    },
  )
  return globber.glob()
}

test('the walk selects what @actions/glob selects, for generated pattern lists', async () => {
  const root = await tempDir()
  await writeTree(root, Object.fromEntries(TREE.map((name) => [name, name])))
  const relative = (files: string[]) =>
    files.map((f) => path.relative(root, f).split(path.sep).join('/')).sort()
  let selecting = 0
  await fc.assert(
    fc.asyncProperty(
      fc.array(pattern, { minLength: 1, maxLength: 3 }),
      fc.boolean(),
      async (patterns, hidden) => {
        const expected = relative(await actionsSelection(root, patterns, hidden))
        const walked = relative((await walkSite({ root, patterns, includeHidden: hidden })).found)
        assert.deepEqual(walked, expected)
        if (expected.length && expected.length < TREE.length - 2) selecting++
      },
    ),
    runSettings(200),
  )
  // Not vacuous: most lists select some files and not others.
  assert.ok(selecting > 10, `${selecting} pattern lists selected some files and not all`)
})
