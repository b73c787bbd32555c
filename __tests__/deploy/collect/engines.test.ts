// The engines table (engines.ts) is the one place that says which files make an engine's build: every
// kind of file it lists, in every compressed form, is fetched by seen-live from a build's folder and,
// when heavy, always shown by the size report; the web engine recognises a build by its marks.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildManifest, type ArtifactFile } from '../../../src/deploy/collect/files.ts'
import {
  COMPRESSIONS,
  ENGINE_FILES,
  GODOT,
  UNITY,
  engineFileOf,
  isBuildEvidence,
  isEngineFile,
  isHeavyEngineFile,
} from '../../../src/deploy/collect/engines.ts'
import { compareSizes } from '../../../src/deploy/sizes.ts'
import { sampleProbes } from '../../../src/deploy/live/verify.ts'
import { planServing, type ServingPlan } from '../../../src/deploy/collect/web-engine.ts'

const file = (path: string, size: number): ArtifactFile => ({
  path,
  absolutePath: `/b/${path}`,
  size,
  mtimeMs: 0,
  dev: 1,
  ino: 1,
})
const manifestOf = (sizes: Record<string, number>) => {
  const files = Object.entries(sizes).map(([p, s]) => file(p, s))
  return buildManifest(
    files,
    files.map(() => '0'.repeat(64)),
  )
}
const builtIn = (folder: string): ServingPlan => ({
  engine: 'auto',
  builds: [{ engine: 'unity', folder, summary: '', evidence: '' }],
  contentTypes: [],
  routes: [],
  warnings: [],
  notes: [],
})
const FORMS = ['', ...COMPRESSIONS.map((c) => c.suffix)]

describe('the engines table', () => {
  test('each kind of engine file, in each compressed form, is known by its ending', () => {
    for (const kind of ENGINE_FILES) {
      for (const form of FORMS) {
        const name = `Build/game${kind.ending}${form}`
        assert.equal(engineFileOf(name)?.ending, kind.ending, name)
        assert.equal(isHeavyEngineFile(name), kind.heavy, name)
        assert.equal(isHeavyEngineFile(name.toUpperCase()), kind.heavy, `${name}, upper case`)
      }
    }
    assert.equal(engineFileOf('Build/game.unityweb')?.engines.join(), 'unity')
    assert.equal(isEngineFile('Build/readme.txt'), false)
    assert.equal(isEngineFile('Build/game.txt.br'), false)
    assert.equal(isHeavyEngineFile('Build/game.framework.js.br'), false)
  })

  test('seen-live fetches whole every engine file of a build folder, the table decides which', () => {
    for (const kind of ENGINE_FILES) {
      for (const form of FORMS) {
        const name = `Build/game${kind.ending}${form}`
        // Three larger files take the "largest" places: the engine file is probed only as one.
        const manifest = manifestOf({
          'index.html': 10,
          [name]: 10,
          'a.bin': 900,
          'b.bin': 900,
          'c.bin': 900,
        })
        const probe = sampleProbes(manifest.files, builtIn('Build')).find((p) => p.file.path === name)
        assert.equal(probe?.compare, 'content', name)
      }
    }
    const other = manifestOf({
      'index.html': 10,
      'Build/notes.txt': 10,
      'a.bin': 900,
      'b.bin': 900,
      'c.bin': 900,
    })
    assert.ok(!sampleProbes(other.files, builtIn('Build')).some((p) => p.file.path === 'Build/notes.txt'))
  })

  test("the size report always shows the heavy ones, the table's word, changed or not", () => {
    for (const kind of ENGINE_FILES) {
      const name = `Build/game${kind.ending}.br`
      const sizes = { 'index.html': 10, [name]: 1000 }
      const change = compareSizes('prod', recordOf(sizes), manifestOf(sizes))
      assert.equal(
        change.rows.some((row) => row.path === name && row.engine),
        kind.heavy,
        name,
      )
    }
  })

  test("a build is recognised by the table's marks", async () => {
    assert.ok(isBuildEvidence(`Build/game${UNITY.loaderEnding}`, false))
    assert.ok(isBuildEvidence(`old/${UNITY.legacyLoader}`, false))
    assert.ok(isBuildEvidence(`game${GODOT.pack}`, false))
    assert.ok(isBuildEvidence('Build/game.wasm.br', true))
    assert.ok(!isBuildEvidence('Build/game.wasm.br', false))
    assert.ok(!isBuildEvidence('Build/game.wasm', true))
    const none = async () => Buffer.alloc(0)
    const godot = await planServing(
      ['index.html', 'game.pck', 'game.wasm', 'game.js'].map((p) => file(p, 1)),
      'auto',
      [],
      none,
    )
    assert.deepEqual(
      godot.builds.map((b) => [b.engine, b.folder]),
      [['godot', '']],
    )
    await assert.rejects(planServing([file('index.html', 1)], 'godot', [], none), {
      message: `web-engine is godot, but no ${GODOT.title} is in path: ${GODOT.missing}, or set web-engine to auto`,
    })
  })
})

function recordOf(sizes: Record<string, number>) {
  const files = Object.entries(sizes).map(([path, size]) => ({ path, size, sha256: '0'.repeat(64) }))
  return {
    format: 1 as const,
    commit: 'c'.repeat(40),
    digest: 'sha256:x',
    fileCount: files.length,
    totalBytes: files.reduce((s, f) => s + f.size, 0),
    files,
  }
}
