// What the bench measured, as a table, and the targets the project holds itself to, met or not. Pure:
// figures in, text out.
import path from 'node:path'

/** The deploy's peak RSS against the bare uploader's on 20,000 small files, in every run (issue 44). */
export const PEAK_SHARE = 1.0

/** The deploy against the bare uploader in pairs (runs.ts's pairedRuns), with each --baseline. */
export interface Paired {
  deployMs: number
  bareMs: number
  /** Deploy / bare, the median of the pairs' ratios. */
  ratio: number
  peakRssMib: number
  bareRssMib: number
  /** Each pair's deploy peak / the bare uploader's peak in the same pair. */
  peakShares: number[]
  baselines: BaselineRuns[]
}
export interface Row extends Paired {
  site: string
  files: number
  mib: number
  hashMs: number
  /** The scan's part of the hashing phase. */
  scanMs: number
  sha256sumMs: number
  hashRatio: number
}
export interface Distant extends Paired {
  site: string
  files: number
  latencyMs: number
  deployConcurrency: number
  bareConcurrency: number
}
export interface SweepRun extends Paired {
  latencyMs: number
  concurrency: number
}
export interface FaultSummary {
  /** Without faults, at the same latency. */
  cleanMs: number
  faultMs: number
  ratio: number
  /** The most retries of one request in a run (median of the runs). */
  mostRetries: number
}
export interface FaultRuns extends FaultSummary {
  files: number
  mib: number
  latencyMs: number
  requestTimeoutS: number
  faults: string
  /** Retry lines logged by a run with faults (median of the runs). */
  retryLines: number
  baselines: Array<FaultSummary & { build: string }>
}
export interface BaselineRuns {
  build: string
  ms: number
  /** Its time / the bare uploader's, median of the pairs. */
  bareRatio: number
  /** This build's time / its, median of the pairs. */
  thisRatio: number
  peakRssMib: number
}
export interface Discarded extends Paired {
  site: string
  files: number
}
export interface LayoutRun {
  layout: string
  files: number
  /** 'this', or a baseline's path. */
  build: string
  dryRunMs: number
  deployMs: number
  dryRunPeakMib: number
  deployPeakMib: number
  /** Of each run at 20,000 files or more: the higher peak of its dry run and deploy / the bare uploader's peak in the same run. */
  peakShares: number[]
}
export interface Measured {
  startupMs: number
  rows: Row[]
  distant: Distant[]
  sweep: SweepRun[]
  faults: FaultRuns | undefined
  discarded: Discarded[]
  layouts: LayoutRun[]
}
export interface Target {
  target: string
  measured: string
  met: boolean
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const x = (ratio: number) => `${ratio.toFixed(2)}x`
const mib = (value: number) => `${value.toFixed(0)} MiB`
/** A baseline by the folder that holds its dist/: /work/base-7108055/dist/index.js is base-7108055. */
const buildName = (build: string) =>
  build === 'this' ? 'this' : path.basename(path.dirname(path.dirname(build)))
/** A table's head and alignment rows; `align` is `---`, `---:` or `:---:` a column. */
const head = (names: string[], align: string[]) => [`| ${names.join(' | ')} |`, `| ${align.join(' | ')} |`]
const right = (n: number) => Array<string>(n).fill('---:')

export function renderTable(m: Measured, concurrency: string): string {
  const lines = [
    `Concurrency ${concurrency} for both (the action's default unless --concurrency); one PUT per file; deploy / bare is the median of paired runs.`,
    '',
    '| site | files | MiB | deploy | bare upload (node:http) | deploy / bare | hashing (scan) | sha256sum | hashing / sha256sum | peak RSS deploy | peak RSS bare |',
    `| --- | ${right(10).join(' | ')} |`,
    ...m.rows.map(
      (r) =>
        `| ${r.site} | ${r.files} | ${r.mib.toFixed(0)} | ${s(r.deployMs)} | ${s(r.bareMs)} | ${x(r.ratio)} | ${s(r.hashMs)} (${r.scanMs.toFixed(0)} ms) | ${s(r.sha256sumMs)} | ${x(r.hashRatio)} | ${mib(r.peakRssMib)} | ${mib(r.bareRssMib)} |`,
    ),
    ...distantTable(m.distant),
    ...faultTable(m.faults),
    ...sweepTable(m.sweep),
    ...discardTable(m.discarded),
    ...layoutTable(m.layouts),
    '',
    `Start-up of dist/index.js to its first line: ${m.startupMs.toFixed(0)} ms.`,
    '',
    ...head(['target', 'measured', 'met'], ['---', '---:', ':---:']),
    ...targets(m).map((t) => `| ${t.target} | ${t.measured} | ${t.met ? 'yes' : 'NO'} |`),
  ]
  return lines.join('\n')
}

function distantTable(far: Distant[]): string[] {
  if (!far.length) return []
  return [
    '',
    'Each PUT answered after the given ms (a store as far as a CI runner sees it); the deploy at its defaults:',
    '',
    '| site | files | ms per PUT | deploy (concurrency) | bare upload (concurrency) | deploy / bare | peak RSS deploy |',
    `| --- | ${right(6).join(' | ')} |`,
    ...far.map((d) => {
      const beyond = beyondOneFile(far.filter((other) => other.latencyMs === d.latencyMs)).of(d)
      return `| ${d.site} | ${d.files} | ${d.latencyMs} | ${s(d.deployMs)} (${d.deployConcurrency}) | ${s(d.bareMs)} (${d.bareConcurrency}) | ${x(d.ratio)}${beyond} | ${mib(d.peakRssMib)} |`
    }),
  ]
}

/**
 * Where the runs hold a site of one small file (small-1: it and the page), each other site's deploy /
 * bare less that site's times: the cost of the files beyond what every run pays once (start-up, the
 * API's calls, the exit).
 */
function beyondOneFile<T extends Paired & { site: string }>(runs: T[]) {
  const one = runs.find((r) => r.site === 'small-1')
  const of = (r: T) =>
    one && r !== one ? ` (${x((r.deployMs - one.deployMs) / (r.bareMs - one.bareMs))} beyond small-1)` : ''
  const note = one
    ? [
        `In brackets: deploy / bare less small-1's times (${s(one.deployMs)}, ${s(one.bareMs)}), what every run pays once.`,
      ]
    : []
  return { of, note }
}

function faultTable(faults: FaultRuns | undefined): string[] {
  if (!faults) return []
  const row = (build: string, f: FaultSummary) =>
    `| ${build} | ${s(f.cleanMs)} | ${s(f.faultMs)} | ${x(f.ratio)} | ${f.mostRetries} |`
  return [
    '',
    `Faults: ${faults.files} files (${faults.mib.toFixed(0)} MiB), ${faults.latencyMs} ms before every request, request-timeout ${faults.requestTimeoutS} s, faults ${faults.faults}:`,
    '',
    ...head(
      ['build', 'without faults', 'with faults', 'with / without', 'most retries of a request'],
      ['---', ...right(4)],
    ),
    row('this', faults),
    ...faults.baselines.map((b) => row(buildName(b.build), b)),
  ]
}

function sweepTable(swept: SweepRun[]): string[] {
  if (!swept.length) return []
  return [
    '',
    'Sweep of the mixed site (deploy and bare upload at the same concurrency):',
    '',
    '| ms per PUT | concurrency | deploy | bare upload | deploy / bare | peak RSS deploy | peak RSS bare |',
    `| ${right(7).join(' | ')} |`,
    ...swept.map(
      (w) =>
        `| ${w.latencyMs} | ${w.concurrency} | ${s(w.deployMs)} | ${s(w.bareMs)} | ${x(w.ratio)} | ${mib(w.peakRssMib)} | ${mib(w.bareRssMib)} |`,
    ),
  ]
}

function discardTable(kept: Discarded[]): string[] {
  if (!kept.length) return []
  const beyond = beyondOneFile(kept)
  return [
    '',
    'Against a store that keeps no byte (no disk, no MD5): what each costs per file.',
    ...beyond.note,
    '',
    '| site | files | build | time | / bare upload | this / it | peak RSS |',
    '| --- | ---: | --- | ---: | ---: | ---: | ---: |',
    ...kept.flatMap((d) => [
      `| ${d.site} | ${d.files} | this | ${s(d.deployMs)} | ${x(d.ratio)}${beyond.of(d)} | | ${mib(d.peakRssMib)} |`,
      ...d.baselines.map(
        (b) =>
          `| ${d.site} | ${d.files} | ${buildName(b.build)} | ${s(b.ms)} | ${x(b.bareRatio)} | ${x(b.thisRatio)} | ${mib(b.peakRssMib)} |`,
      ),
      `| ${d.site} | ${d.files} | bare upload | ${s(d.bareMs)} | | | |`,
    ]),
  ]
}

function layoutTable(laid: LayoutRun[]): string[] {
  if (!laid.length) return []
  return [
    '',
    'Layouts, against a store that keeps no byte: flat is one folder, folders one file a folder, small 100 a folder.',
    '',
    '| layout | files | build | dry run | x the fewest | deploy | x the fewest | peak RSS dry run | peak RSS deploy |',
    `| --- | ---: | --- | ${right(6).join(' | ')} |`,
    ...laid.map((r) => {
      const fewest = fewestOf(laid, r)
      return `| ${r.layout} | ${r.files} | ${buildName(r.build)} | ${s(r.dryRunMs)} | ${x(r.dryRunMs / fewest.dryRunMs)} | ${s(r.deployMs)} | ${x(r.deployMs / fewest.deployMs)} | ${mib(r.dryRunPeakMib)} | ${mib(r.deployPeakMib)} |`
    }),
  ]
}

/**
 * Each pair's own deploy peak against its bare uploader's, the worst reported: the highest peak
 * against the highest would hide a pair over.
 */
export function peakInEveryRun(what: string, shares: number[]): Target {
  const worst = Math.max(...shares)
  return {
    target: `${what}: peak RSS <= ${PEAK_SHARE.toFixed(1)}x the bare uploader's in every run`,
    measured: `${x(worst)} (worst of ${shares.length})`,
    met: worst <= PEAK_SHARE,
  }
}

/** The run of the same layout and build with the fewest files. */
function fewestOf(laid: LayoutRun[], run: LayoutRun): LayoutRun {
  const same = laid.filter((r) => r.layout === run.layout && r.build === run.build)
  return same.reduce((a, b) => (b.files < a.files ? b : a))
}

/** The bounds the project holds itself to, for the sites this run measured. */
export function targets(m: Measured): Target[] {
  const found = [...m.discarded.flatMap(discardTargets), ...layoutTargets(m.layouts)]
  const site = (name: string) => m.rows.find((r) => r.site === name)
  const [mixed, many, big] = [site('mixed'), site('small-20000'), site('big')]
  if (mixed) found.push(bound('mixed site: deploy <= 1.10x the bare uploader', mixed.ratio, 1.1))
  if (many) found.push(peakInEveryRun('20,000 small files', many.peakShares))
  if (big) {
    const target = `one ${big.mib.toFixed(0)} MiB file: peak RSS <= 160 MiB`
    found.push({ target, measured: mib(big.peakRssMib), met: big.peakRssMib <= 160 })
  }
  for (const d of m.distant) {
    // Issue 44 sets 1.05x for the 80 ms store; other latencies keep the earlier 1.00x.
    const most = d.latencyMs === 80 ? 1.05 : 1
    const target = `${d.site} (${d.files} files), ${d.latencyMs} ms per PUT: deploy at its defaults <= ${most.toFixed(2)}x the bare uploader at ${d.bareConcurrency}`
    found.push(bound(target, d.ratio, most))
  }
  if (m.faults) {
    const target = `the README's faults, ${m.faults.latencyMs} ms: deploy <= 3x the deploy without faults`
    found.push(bound(target, m.faults.ratio, 3))
  }
  const startup = `${m.startupMs.toFixed(0)} ms`
  found.push({ target: 'start-up of dist/index.js < 150 ms', measured: startup, met: m.startupMs < 150 })
  return found
}

function bound(target: string, ratio: number, most: number): Target {
  return { target, measured: x(ratio), met: ratio <= most }
}

function discardTargets(d: Discarded): Target[] {
  const what = `${d.site}, a store that keeps no byte`
  return [
    bound(`${what}: deploy <= 1.10x the bare uploader`, d.ratio, 1.1),
    ...d.baselines.map((b) => bound(`${what}: no slower than ${b.build}`, b.thisRatio, 1)),
  ]
}

/** 4x the files in at most ~4.5x the time, in each layout; the peak of 20,000 files in every run. */
function layoutTargets(laid: LayoutRun[]): Target[] {
  const found: Target[] = []
  for (const r of laid.filter((run) => run.build === 'this')) {
    const fewest = fewestOf(laid, r)
    if (fewest.files === r.files) continue
    const most = (4.5 * r.files) / fewest.files / 4
    for (const [what, ms, fewestMs] of [
      ['dry run', r.dryRunMs, fewest.dryRunMs],
      ['deploy', r.deployMs, fewest.deployMs],
    ] as const) {
      const target = `${r.layout}: ${what} of ${r.files} files <= ${most.toFixed(2)}x that of ${fewest.files}`
      found.push(bound(target, ms / fewestMs, most))
    }
  }
  for (const r of laid.filter((run) => run.build === 'this' && run.peakShares.length)) {
    found.push(peakInEveryRun(`${r.layout}-${r.files}`, r.peakShares))
  }
  return found
}
