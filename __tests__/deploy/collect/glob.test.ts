// The one walk and globber of the action and the CLI selects exactly what @actions/glob selects (the
// rules GitHub users know), for the lists below and for generated ones (stars, classes, POSIX ones
// too, globstars, exclusions, folder patterns), without its regular expressions: a pattern that would
// backtrack for minutes is matched at once, and a cancelled run's walk stops.
import assert from 'node:assert/strict'
import { mkdir, symlink } from 'node:fs/promises'
import path from 'node:path'
import { test } from 'node:test'
import * as actionsGlob from '@actions/glob'
import fc from 'fast-check'
import { checkPatterns, fileSelector } from '../../../src/deploy/collect/glob.ts'
import { walkSite } from '../../../src/deploy/collect/walk.ts'
import { memoryLogger } from '../../../src/common/logger.ts'
import { CancelledError } from '../../../src/common/cancel.ts'
import { scanArtifacts, tempDir, writeTree } from '../../support/helpers.ts'
import { needsSymlinks } from '../../support/platform.ts'
import { runSettings } from '../../properties/steps.ts'

const PATTERNS: string[][] = [
  ['**'],
  ['**/*'],
  ['*.html'],
  ['assets'],
  ['assets/'],
  ['assets/**/*.png'],
  ['**', '!assets'],
  ['**', '!assets/'],
  ['**', '!**/*.map', 'js/keep.js.map'],
  ['js/*.js', '!js/b.js'],
  ['./index.html', 'a b/**'],
  ['*'],
  ['no-such-thing'],
  ['js/[ab].js', '**/?.png'],
  ['js/[!a].js', 'assets/deep/*.[w]asm'],
  ['js/[a-b].js*', '*.htm?'],
  ['**/deep/**', '!js/a.js', 'js/a.js'],
  ['**/*a*.*', '!**/*e*'],
  ['js//a.js', 'assets/**/**/y.png'],
  ['./'],
  ['.', '!js/'],
  ['js/[[:alpha:]].js', '**/[[:digit:][:upper:]]*'],
  ['js/[^a].js', 'a b/[[:alnum:]].js', '*.[[:lower:]]tml'],
  ['js/[]a].js', 'js/[a-].js', 'js/[!]].js'],
  // Found by the generated lists below: `**/` matches the root folder too, so its files are selected.
  ['**/'],
  ['**', '!**/', 'js/**/'],
]

// The property's tree: hidden files, spaces, non-ASCII, names that differ only in case.
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

test(
  'the walk selects what @actions/glob selects, hidden or not, links listed and not followed',
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
    const walked = async (patterns: string[], includeHidden: boolean) =>
      relative((await walkSite({ root, patterns, includeHidden })).found)
    for (const patterns of PATTERNS) {
      for (const includeHidden of [false, true]) {
        const expected = relative(await actionsSelection(root, patterns, includeHidden))
        assert.deepEqual(
          await walked(patterns, includeHidden),
          expected,
          `${patterns.join(' ')} (include-hidden ${includeHidden})`,
        )
      }
    }
    // Not vacuous: the patterns above select different sets.
    assert.deepEqual(await walked(['js/*.js', '!js/b.js'], false), ['js/a.js'])
    assert.deepEqual(await walked(['js/[!a].js'], false), ['js/b.js'])
    assert.ok((await walked(['**'], true)).length > (await walked(['**'], false)).length)
  },
)

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

test('a star before each of a dozen letters against a long name is matched at once, and matches right', () => {
  // minimatch's regular expression backtracks through every way of placing the stars: with 8 of each
  // letter it takes minutes. Here each name is matched in steps proportional to its length times the pattern's.
  const runaway = '*a*b*c*d*e*f*g*h*i*j*k*l'
  const select = fileSelector([`**/${runaway}`])
  const letters = [...'abcdefghijk']
  for (let n = 1; n <= 200; n++) {
    assert.equal(select(`dir/${letters.map((c) => c.repeat(n)).join('')}`), false)
  }
  assert.equal(select(`dir/${letters.map((c) => c.repeat(200)).join('')}l`), true)
  assert.equal(select('dir/xaybzcwdeefgghhiijjkkl.txt'), false)
  assert.equal(select('dir/xaybzcwdeefgghhiijjkkl'), true)
})

test('the patterns are checked: relative, never above the root', () => {
  assert.throws(() => checkPatterns(['/etc/**']), /'\/etc\/\*\*' is absolute/)
  assert.throws(() => checkPatterns(['!C:/x']), /is absolute/)
  assert.throws(() => checkPatterns(['a/../../b']), /reaches outside path/)
  assert.doesNotThrow(() => checkPatterns(['!a/**', 'b..c/*']))
})

/** One folder of 3,000 files, made once: the tests below only read it. */
let bigFolder: Promise<string> | undefined
function aBigFolder(): Promise<string> {
  bigFolder ??= tempDir().then(async (root) => {
    await writeTree(root, Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`${i}.js`, 'x'])))
    return root
  })
  return bigFolder
}

test('a cancelled run stops the walk, however many entries are left', async () => {
  const root = await aBigFolder()
  const controller = new AbortController()
  controller.abort(new CancelledError('SIGTERM'))
  await assert.rejects(
    walkSite({ root, patterns: ['**'], includeHidden: false, signal: controller.signal }),
    CancelledError,
  )
})

test('the walk lets the event loop run between batches: a signal that comes while it lists a big folder is heard', async () => {
  const root = await aBigFolder()
  // The signal is raised by the event loop's next turn once the walk handles its first entry (the
  // folder is listed by then): only a walk that yields before its last entry hears it.
  let aborted = false
  let scheduled = false
  const signal = {
    throwIfAborted() {
      if (aborted) throw new CancelledError('SIGTERM')
      if (!scheduled) setImmediate(() => (aborted = true))
      scheduled = true
    },
  } as AbortSignal
  await assert.rejects(
    walkSite({ root, patterns: ['**/*.js'], includeHidden: false, signal }),
    CancelledError,
  )
})

test('so does the scan that opens each file found: a signal that comes once the walk is done is heard', async () => {
  const root = await aBigFolder()
  // The walk asks the signal once an entry (3,000 times); the next ask is the scan's, which arms it.
  let calls = 0
  let aborted = false
  const signal = {
    throwIfAborted() {
      if (aborted) throw new CancelledError('SIGTERM')
      if (++calls === 3001) setImmediate(() => (aborted = true))
    },
  } as AbortSignal
  await assert.rejects(
    scanArtifacts({ root, patterns: ['**'], includeHidden: false, logger: memoryLogger(), signal }),
    CancelledError,
  )
  assert.ok(calls > 3000, 'the walk was done when the signal came')
})
