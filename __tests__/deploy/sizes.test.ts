import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildManifest, type ArtifactFile } from '../../src/deploy/collect/files.ts'
import type { SiteRecord } from '../../src/deploy/collect/record.ts'
import { compareSizes, describeDelta, moreRow, SIZE_ROWS_SHOWN, sizeSummary } from '../../src/deploy/sizes.ts'

const MiB = 1024 * 1024
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
const recordOf = (sizes: Record<string, number>, commit = 'c'.repeat(40)): SiteRecord => {
  const files = Object.entries(sizes).map(([path, size]) => ({ path, size, sha256: '0'.repeat(64) }))
  return {
    format: 1,
    commit,
    digest: 'sha256:x',
    fileCount: files.length,
    totalBytes: files.reduce((s, f) => s + f.size, 0),
    files,
  }
}

describe('what changed in size', () => {
  test('totals, and each change largest first, new and removed files among them', () => {
    const change = compareSizes(
      'prod',
      recordOf({ 'index.html': 100, 'Build/game.wasm': 10 * MiB, 'old.png': 5000, 'same.js': 10 }),
      manifestOf({ 'index.html': 120, 'Build/game.wasm': 30 * MiB, 'new.png': 7000, 'same.js': 10 }),
    )
    assert.equal(change.totalBefore, 10 * MiB + 5110)
    assert.equal(change.totalAfter, 30 * MiB + 7130)
    assert.deepEqual(
      change.rows.map((r) => [r.path, r.before, r.after]),
      [
        ['Build/game.wasm', 10 * MiB, 30 * MiB],
        ['new.png', undefined, 7000],
        ['old.png', 5000, undefined],
        ['index.html', 100, 120],
      ],
    )
    assert.deepEqual([change.added, change.removed, change.changed], [1, 1, 4])
    assert.equal(moreRow(change), undefined)
    assert.equal(describeDelta(10 * MiB, 30 * MiB), '+20.0 MiB (+200.0%)')
    assert.equal(describeDelta(5000, undefined), 'removed (-4.9 KiB)')
    assert.equal(describeDelta(undefined, 7000), 'new (+6.8 KiB)')
    assert.match(
      sizeSummary(change),
      /^Total 10\.0 MiB → 30\.0 MiB: \+20\.0 MiB \(\+199\.\d%\); 4 files changed \(1 new, 1 removed\)$/,
    )
  })

  test('engine files are shown even unchanged, in every compressed form; at most SIZE_ROWS_SHOWN rows, the rest summed up', () => {
    const before: Record<string, number> = {
      'Build/game.data.br': 1000,
      'Build/game.wasm.gz': 2000,
      'Build/game.data.unityweb': 3000,
      'game.pck': 4000,
    }
    const after = { ...before }
    for (let i = 0; i < 30; i++) {
      before[`img/${i}.png`] = 100
      after[`img/${i}.png`] = 100 + i + 1
    }
    const change = compareSizes('prod', recordOf(before), manifestOf(after))
    assert.equal(change.rows.length, SIZE_ROWS_SHOWN)
    const engine = change.rows.filter((r) => r.engine).map((r) => r.path)
    assert.deepEqual(engine.sort(), [
      'Build/game.data.br',
      'Build/game.data.unityweb',
      'Build/game.wasm.gz',
      'game.pck',
    ])
    // The other rows are the largest changes: img/29 (+30 B) down to img/19 (+20 B).
    const others = change.rows.filter((r) => !r.engine).map((r) => r.path)
    assert.deepEqual(others.slice(0, 2), ['img/29.png', 'img/28.png'])
    assert.equal(others.length, SIZE_ROWS_SHOWN - 4)
    // img/0 .. img/18 left out: 19 files of +1 .. +19 B.
    assert.deepEqual(change.more, { count: 19, delta: (19 * 20) / 2 })
    assert.deepEqual(moreRow(change), { files: 'and 19 more files changed', change: '+190 B in all' })
  })
})
