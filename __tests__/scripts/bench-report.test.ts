// The bench's targets (scripts/bench/report.ts): the 20,000-file peak is judged run by run, at most
// the bare uploader's own peak in every run (issue 44), in the small-20000 site and each layout.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  peakInEveryRun,
  renderTable,
  targets,
  type Discarded,
  type LayoutRun,
  type Measured,
  type Row,
} from '../../scripts/bench/report.ts'

const paired = { deployMs: 1000, bareMs: 1000, ratio: 1, peakRssMib: 200, bareRssMib: 300, baselines: [] }
const row = (site: string, peakShares: number[]): Row => ({
  site,
  files: 20001,
  mib: 321,
  ...paired,
  peakShares,
  hashMs: 1,
  scanMs: 1,
  sha256sumMs: 1,
  hashRatio: 1,
})
const layout = (files: number, peakShares: number[]): LayoutRun => ({
  layout: 'flat',
  files,
  build: 'this',
  dryRunMs: files / 10,
  deployMs: files / 5,
  dryRunPeakMib: 100,
  deployPeakMib: 200,
  peakShares,
})
const measured = (more: Partial<Measured>): Measured => ({
  startupMs: 90,
  rows: [],
  distant: [],
  sweep: [],
  faults: undefined,
  discarded: [],
  layouts: [],
  ...more,
})

test('the peak check is met at the bare uploader’s peak and not above it, in the worst run', () => {
  assert.equal(peakInEveryRun('x', [0.6, 1.0]).met, true)
  const over = peakInEveryRun('x', [0.6, 1.01, 0.7])
  assert.equal(over.met, false)
  assert.equal(over.measured, '1.01x (worst of 3)')
  assert.match(over.target, /<= 1\.0x the bare uploader's in every run/)
})

test('small-20000 and each 20,000-file layout get the per-run peak check', () => {
  const found = targets(
    measured({
      rows: [row('small-20000', [0.7, 0.95])],
      layouts: [layout(5000, []), layout(20000, [0.6, 1.2])],
    }),
  )
  const peaks = found.filter((t) => t.target.includes('peak RSS <= 1.0x'))
  assert.deepEqual(
    peaks.map((t) => [t.target.split(':')[0], t.met]),
    [
      ['flat-20000', false],
      ['20,000 small files', true],
    ],
  )
})

test('with small-1 in the runs, each site says its deploy / bare beyond what one file costs', () => {
  const site = (name: string, files: number, deployMs: number, bareMs: number): Discarded => ({
    ...paired,
    site: name,
    files,
    deployMs,
    bareMs,
    ratio: deployMs / bareMs,
    peakShares: [],
  })
  const one = site('small-1', 2, 340, 210)
  const table = renderTable(measured({ discarded: [one, site('small-3000', 3001, 2340, 2110)] }), '192')
  // (2.34 - 0.34) / (2.11 - 0.21): 1.05x, where the whole run is 1.11x.
  assert.match(table, /\| small-3000 \| 3001 \| this \| 2\.34 s \| 1\.11x \(1\.05x beyond small-1\) \|/)
  assert.match(table, /\| small-1 \| 2 \| this \| 0\.34 s \| 1\.62x \|/)
  assert.doesNotMatch(
    renderTable(measured({ discarded: [site('small-3000', 3001, 2340, 2110)] }), '192'),
    /beyond/,
  )
})
