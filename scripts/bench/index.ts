// npm run bench: the deploy against the practical limits of this machine, measured in one run.
//
// For each site it starts the emulator in its own process with the real service's upload shape (one
// PUT per file, whatever its size), then runs, interleaved and repeated: the whole deploy through
// dist/index.js as the runner runs it (hashing included) and the honest reference, a bare uploader
// written with node:http (scripts/bench/bare-upload.ts), at the same concurrency; then our hashing
// phase alone and sha256sum. The distant sites (the mixed site and 1,200 small files) are also run
// against a store that answers each PUT after each of --latency ms (a CI runner's round trip), the
// deploy at its default settings against the bare uploader at --distant-concurrency. The faults site
// runs the deploy through the README's fault example (--faults) and without faults, both at
// --fault-latency ms per request, and gives the ratio. It reports medians, paired ratios, the peak RSS
// of the deploying process and the start-up of dist/index.js, as a table and as JSON.
//
// The discard sites (--discard-sites) run the deploy, the bare uploader and each --baseline against a
// store that keeps no byte (the emulator's discardBytes: no disk, no MD5), so that what each costs
// per file shows. The layouts (--layouts, --layout-files) time the dry run and the deploy of the same
// count of small files all in one folder (flat-N), one a folder (folders-N) and 100 a folder
// (small-N), against that store, for how the time grows with the files in each layout.
//
// options.ts reads the options, processes.ts times each process, runs.ts repeats them, report.ts
// renders the table and judges the targets.
import { mkdir, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {
  baselines,
  concurrency,
  discardSites,
  distantSites,
  latencies,
  layoutFiles,
  layouts,
  MiB,
  repeatsOf,
  root,
  runFaults,
  siteNames,
  specs,
  values,
  work,
} from './options.ts'
import { hashPhase, measureStartup, median, startEmulatorProcess, timeCommand } from './processes.ts'
import { renderTable, targets, type Distant, type Measured, type Row, type SweepRun } from './report.ts'
import { measureFaults, measureLayout, pairedRuns } from './runs.ts'
import { buildSite } from './site.ts'
import { describeSmokeCost, measureSmoke } from './smoke.ts'

const started = Date.now()
const sweep: SweepRun[] = []

try {
  await mkdir(work, { recursive: true })
  const startupMs = await measureStartup()
  console.log(`start-up of dist/index.js to its first line: ${startupMs.toFixed(0)} ms (median of 11)`)
  const measured: Measured = {
    startupMs,
    rows: [],
    distant: [],
    sweep,
    faults: undefined,
    discarded: [],
    layouts: [],
  }
  for (const name of siteNames) measured.rows.push(await measureSite(name))
  for (const name of distantSites) measured.distant.push(...(await measureDistant(name)))
  for (const name of discardSites) {
    const dir = path.join(work, `discard-${name}`)
    const built = await buildSite(dir, specs[name]!)
    const store = await startEmulatorProcess(0, { discard: true })
    try {
      console.log(`\n${name} (${built.files} files) against a store that keeps no byte`)
      const p = await pairedRuns(store.url, dir, concurrency, concurrency, Number(values.repeats))
      measured.discarded.push({ site: name, files: built.files, ...p })
    } finally {
      await store.stop()
      await rm(dir, { recursive: true, force: true })
    }
  }
  for (const layout of layouts) {
    for (const files of layoutFiles) measured.layouts.push(...(await measureLayout(layout, files)))
  }
  if (runFaults) measured.faults = await measureFaults()
  const smoke = Number(values.smoke) > 0 ? await measureSmoke(Number(values.smoke)) : undefined
  if (smoke) console.log(describeSmokeCost(smoke))

  const table = renderTable(measured, concurrency)
  console.log(`\n${table}`)
  const result = {
    date: new Date().toISOString(),
    machine: `${os.cpus()[0]?.model ?? 'unknown cpu'}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`,
    concurrency: Number(concurrency),
    repeats: Number(values.repeats),
    scalingRepeats: Number(values['scaling-repeats']),
    baselines,
    ...measured,
    smoke,
    targets: targets(measured),
    totalSeconds: (Date.now() - started) / 1000,
  }
  await mkdir(path.dirname(values.out), { recursive: true })
  await writeFile(values.out, JSON.stringify(result, null, 2) + '\n')
  await writeFile(values.out.replace(/\.json$/, '.md'), table + '\n')
  console.log(
    `\n${result.machine}; ${result.totalSeconds.toFixed(0)} s in all. Figures in ${path.relative(root, values.out)}`,
  )
} finally {
  await rm(work, { recursive: true, force: true })
}

/** A site's deploy against the bare uploader, its hashing phase against sha256sum, and the sweep on mixed. */
async function measureSite(name: string): Promise<Row> {
  const dir = path.join(work, name)
  const built = await buildSite(dir, specs[name]!)
  console.log(`\n${name}: ${built.files} files, ${(built.bytes / MiB).toFixed(1)} MiB`)
  const emulator = await startEmulatorProcess(0)
  const repeats = repeatsOf(name)
  try {
    const pairs = await pairedRuns(emulator.url, dir, concurrency, concurrency, repeats)
    const hashes: number[] = []
    const scans: number[] = []
    const sums: number[] = []
    for (let i = 0; i < repeats; i++) {
      const phase = await hashPhase(dir)
      hashes.push(phase.ms)
      scans.push(phase.scanMs)
      sums.push(
        await timeCommand('sh', ['-c', `find . -type f -print0 | xargs -0 sha256sum > /dev/null`], dir),
      )
    }
    if (name === 'mixed' && values.sweep) sweep.push(...(await measureSweep(dir, repeats)))
    return {
      site: name,
      files: built.files,
      mib: built.bytes / MiB,
      ...pairs,
      hashMs: median(hashes),
      scanMs: median(scans),
      sha256sumMs: median(sums),
      hashRatio: median(hashes) / median(sums),
    }
  } finally {
    await emulator.stop()
    await rm(dir, { recursive: true, force: true })
  }
}

/** Deploy and bare upload of the mixed site at each --sweep concurrency, at each --sweep-latencies. */
async function measureSweep(dir: string, repeats: number): Promise<SweepRun[]> {
  const runs: SweepRun[] = []
  for (const latency of values['sweep-latencies'].split(',').map(Number)) {
    const far = await startEmulatorProcess(latency)
    try {
      for (const c of values.sweep.split(',')) {
        console.log(`  sweep: ${latency} ms per PUT, concurrency ${c}`)
        const p = await pairedRuns(far.url, dir, c, c, repeats)
        runs.push({ latencyMs: latency, concurrency: Number(c), ...p })
      }
    } finally {
      await far.stop()
    }
  }
  return runs
}

/** A site at each --latency: the deploy at its defaults against the bare uploader at --distant-concurrency. */
async function measureDistant(name: string): Promise<Distant[]> {
  const dir = path.join(work, `distant-${name}`)
  const built = await buildSite(dir, specs[name]!)
  const bareConcurrency = values['distant-concurrency']
  const runs: Distant[] = []
  try {
    for (const latency of latencies) {
      const far = await startEmulatorProcess(latency)
      try {
        console.log(
          `\n${name} (${built.files} files), each PUT answered after ${latency} ms: deploy at concurrency ${concurrency}, bare at ${bareConcurrency}`,
        )
        const p = await pairedRuns(far.url, dir, concurrency, bareConcurrency, Number(values.repeats))
        runs.push({
          site: name,
          files: built.files,
          latencyMs: latency,
          deployConcurrency: Number(concurrency),
          bareConcurrency: Number(bareConcurrency),
          ...p,
        })
      } finally {
        await far.stop()
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  return runs
}
