// Engine detection visits each file once: the work it does grows as the site does, in every layout
// (all files in one folder, one file per folder). Counted, not timed: every step of an array's or a
// map's iterator and every call of the string methods that split paths, during planServing of n and
// of 4n files. A pass over every folder (or file) for each folder would count about 16 times as much.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ArtifactFile } from '../../../src/deploy/collect/files.ts'
import { planServing, type ReadStart } from '../../../src/deploy/collect/web-engine.ts'
import type { HeaderRule } from '../../../src/inputs/headers.ts'

type Layout = 'one folder' | 'one file per folder'

/** n files in a layout, with a Unity build, a Godot export and its async pack among them. */
function site(n: number, layout: Layout): ArtifactFile[] {
  const paths = [
    'Build/game.loader.js',
    'Build/game.wasm.br',
    'Build/game.data.gz',
    'Build/game.framework.js.br',
    'godot/index.html',
    'godot/game.js',
    'godot/game.wasm',
    'godot/game.asyncpck/assets/a.bin',
  ]
  for (let i = 0; paths.length < n; i++) {
    paths.push(layout === 'one folder' ? `assets/asset-${i}.png` : `assets/${i}/asset-${i}.png`)
  }
  return paths.map((path, ino) => ({
    path,
    absolutePath: `/site/${path}`,
    size: 64,
    mtimeMs: 0,
    dev: 1,
    ino,
  }))
}

const STRING_METHODS = ['slice', 'lastIndexOf', 'indexOf', 'startsWith', 'endsWith', 'includes'] as const

/** The iterator steps and string-method calls `work` makes (every other one of this process too, while it runs). */
async function countOperations(work: () => Promise<unknown>): Promise<number> {
  let count = 0
  const patched: Array<[object, string | symbol, unknown]> = []
  const wrap = (target: object, key: string | symbol) => {
    const original = Reflect.get(target, key) as (...args: unknown[]) => unknown
    patched.push([target, key, original])
    Reflect.set(target, key, function (this: unknown, ...args: unknown[]) {
      count++
      return original.apply(this, args)
    })
  }
  wrap(Object.getPrototypeOf([][Symbol.iterator]()) as object, 'next')
  wrap(Object.getPrototypeOf(new Map().keys()) as object, 'next')
  wrap(Object.getPrototypeOf(new Set().values()) as object, 'next')
  for (const method of STRING_METHODS) wrap(String.prototype, method)
  try {
    await work()
  } finally {
    for (const [target, key, original] of patched.reverse()) Reflect.set(target, key, original)
  }
  return count
}

const html = Buffer.from('<script>const GODOT_CONFIG = {}; const GODOT_THREADS_ENABLED = false;</script>')
const readStart: ReadStart = async (file) => (file.path.endsWith('.html') ? html : Buffer.alloc(0))
// Two overlapping globs: their files are counted.
const headers: HeaderRule[] = [
  { glob: 'assets/**', name: 'Cache-Control', value: 'max-age=60' },
  { glob: '**/*.png', name: 'X-Image', value: 'yes' },
]

for (const layout of ['one folder', 'one file per folder'] as const) {
  test(`engine detection does 4x the work for 4x the files, ${layout}`, async () => {
    const small = site(2_000, layout)
    const large = site(8_000, layout)
    // Both recognised, whatever the count.
    for (const files of [small, large]) {
      const plan = await planServing(files, 'auto', headers, readStart)
      assert.deepEqual(
        plan.builds.map((b) => b.engine),
        ['unity', 'godot'],
      )
    }
    const smallCount = await countOperations(() => planServing(small, 'auto', headers, readStart))
    const largeCount = await countOperations(() => planServing(large, 'auto', headers, readStart))
    assert.ok(smallCount > 2_000, `${smallCount} operations counted for 2,000 files`)
    assert.ok(
      largeCount <= 4.5 * smallCount,
      `${largeCount} operations for 8,000 files against ${smallCount} for 2,000: ${(largeCount / smallCount).toFixed(1)}x`,
    )
  })
}

// A site of thousands of folders and no build: no folder is indexed (each one's object and lists
// would outlive young collections and grow V8's young generation, the peak of such a site's deploy).
test('engine detection keeps nothing per folder of a site without a build', async () => {
  const files = site(8_000, 'one file per folder').filter((f) => f.path.startsWith('assets/'))
  let entries = 0
  const set = Reflect.get(Map.prototype, 'set') as Map<unknown, unknown>['set']
  Reflect.set(Map.prototype, 'set', function (this: Map<unknown, unknown>, key: unknown, value: unknown) {
    entries++
    return set.call(this, key, value)
  })
  try {
    const plan = await planServing(files, 'auto', [], readStart)
    assert.deepEqual(plan.builds, [])
  } finally {
    Reflect.set(Map.prototype, 'set', set)
  }
  assert.ok(entries < 100, `${entries} map entries set for ${files.length} folders`)
})
