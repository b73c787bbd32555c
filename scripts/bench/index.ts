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
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { actionDefaults, runAction } from '../run-action.ts'
import { describeSmokeCost, measureSmoke } from './smoke.ts'
import { buildSite, type SiteSpec } from './site.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const MiB = 1024 * 1024
/** The README's flaky deploy (docs/emulator.md): 20% 503s, 5% resets, two stalls, 10% API 503s. */
const README_FAULTS = '{"putErrorRate":0.2,"putResetRate":0.05,"putStallCount":2,"apiErrorRate":0.1}'

const { values } = parseArgs({
  options: {
    sites: { type: 'string', default: 'mixed,big,small-1000,small-5000,small-20000,faults' },
    repeats: { type: 'string', default: '5' },
    'scaling-repeats': { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '' },
    latency: { type: 'string', default: '20,80' },
    'distant-sites': { type: 'string', default: 'mixed,small-1200' },
    'distant-concurrency': { type: 'string', default: '128' },
    faults: { type: 'string', default: README_FAULTS },
    'fault-latency': { type: 'string', default: '50' },
    'fault-files': { type: 'string', default: '2000' },
    'fault-request-timeout': { type: 'string', default: '5' },
    sweep: { type: 'string', default: '' },
    'sweep-latencies': { type: 'string', default: '20,80' },
    'small-files': { type: 'string', default: '3000' },
    'big-files': { type: 'string', default: '4' },
    'big-mib': { type: 'string', default: '40' },
    'single-mib': { type: 'string', default: '700' },
    baseline: { type: 'string', default: '' },
    'discard-sites': { type: 'string', default: 'small-3000' },
    layouts: { type: 'string', default: 'flat,folders,small' },
    'layout-files': { type: 'string', default: '5000,20000' },
    smoke: { type: 'string', default: '3' },
    out: { type: 'string', default: path.join(root, '.bench/results.json') },
    help: { type: 'boolean', default: false },
  },
})
if (values.help) {
  console.log(`npm run bench -- [options]
  --sites a,b,c            sites to measure (default mixed,big,small-1000,small-5000,small-20000,faults)
                           mixed: --small-files files of 1-32 KiB + --big-files files of --big-mib MiB
                           big: one file of --single-mib MiB; small-N: N files of 1-32 KiB
                           faults: the fault runs below (no bare upload, no hashing); '' for none
  --repeats N              pairs of runs on mixed, big, the distant sites and faults, median
                           reported (default 5)
  --scaling-repeats N      the same for the small-N sites (default 3)
  --concurrency N          the deploy's concurrency input (default: the action's default)
  --latency MS,MS          the distant sites again with each PUT answered after each of these ms: the
                           deploy at its default settings against the bare uploader at
                           --distant-concurrency (default 20,80 and 128; 0 skips them)
  --distant-sites a,b      sites for --latency (default mixed,small-1200)
  --faults JSON            the fault runs: the deploy through the emulator's --faults JSON (default
                           the README's: ${README_FAULTS})
                           against the same deploy without faults, both with --fault-latency ms
                           (default 50) before every request, on --fault-files files of 1-32 KiB
                           (default 2000) + one of --big-mib MiB, with request-timeout
                           --fault-request-timeout s (default 5: what each stalled PUT waits)
  --sweep 16,32,64,128     time deploy and bare upload of the mixed site at these concurrencies, at
                           each of --sweep-latencies (default 20,80) ms per PUT, with peak RSS
  --baseline FILE[,FILE]   also run these other builds of dist/index.js in each pair (A/B of a
                           change, or a sweep of builds that differ in one constant)
  --discard-sites a,b      sites whose deploy, bare upload and baselines run against a store that
                           keeps no byte (no disk, no MD5): the cost per file (default small-3000; ''
                           for none)
  --layouts a,b            the dry run and the deploy (against that store) of --layout-files small
                           files in each layout: flat (one folder), folders (one file a folder),
                           small (100 a folder), --scaling-repeats times (default flat,folders,small;
                           '' for none)
  --layout-files N,M       the file counts of the layouts (default 5000,20000)
  --smoke N                example-site's deploy with smoke-test on and off, N pairs: what the
                           smoke test costs (default 3; 0 skips it; see smoke.ts)
  --out FILE               where the JSON goes (default .bench/results.json)`)
  process.exit(0)
}

const repeatsOf = (site: string) =>
  Number(site.startsWith('small-') ? values['scaling-repeats'] : values.repeats)
const defaults = await actionDefaults(path.join(root, 'action.yml'))
const concurrency = values.concurrency || defaults.concurrency || '8'
const specs: Record<string, SiteSpec> = {
  mixed: {
    smallFiles: Number(values['small-files']),
    bigFiles: Number(values['big-files']),
    bigBytes: Number(values['big-mib']) * MiB,
  },
  big: { smallFiles: 0, bigFiles: 1, bigBytes: Number(values['single-mib']) * MiB },
}
const faultSite: SiteSpec = {
  smallFiles: Number(values['fault-files']),
  bigFiles: 1,
  bigBytes: Number(values['big-mib']) * MiB,
}
const siteNames = values.sites.split(',').filter((name) => name && name !== 'faults')
const runFaults = values.sites.split(',').includes('faults')
const latencies = values.latency
  .split(',')
  .map(Number)
  .filter((ms) => ms > 0)
const distantSites = latencies.length ? values['distant-sites'].split(',').filter(Boolean) : []
const discardSites = values['discard-sites'].split(',').filter(Boolean)
const layouts = values.layouts.split(',').filter(Boolean)
const layoutFiles = values['layout-files'].split(',').filter(Boolean).map(Number)
const FILES_A_FOLDER: Record<string, number> = { small: 100, flat: 0, folders: 1 }
for (const layout of layouts) {
  if (FILES_A_FOLDER[layout] === undefined) throw new Error(`unknown layout ${layout}`)
}
for (const name of [...siteNames, ...distantSites, ...discardSites]) {
  const small = /^(small|flat|folders)-(\d+)$/.exec(name)
  if (small) {
    specs[name] = {
      smallFiles: Number(small[2]),
      bigFiles: 0,
      bigBytes: 0,
      perFolder: FILES_A_FOLDER[small[1]!],
    }
  } else if (!specs[name]) throw new Error(`unknown site ${name}`)
}
const baselines = values.baseline.split(',').filter(Boolean)

const work = path.join(os.tmpdir(), `gamehost-bench-${process.pid}`)
// The emulator keeps what it receives: in memory (tmpfs) when there is one, so that the disk under
// it does not become what is measured.
const storageTmp = existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir()

interface Row {
  site: string
  files: number
  mib: number
  deployMs: number
  bareMs: number
  ratio: number
  hashMs: number
  /** The scan's part of the hashing phase. */
  scanMs: number
  sha256sumMs: number
  hashRatio: number
  peakRssMib: number
  bareRssMib: number
  /** Each pair's deploy peak / the bare uploader's peak in the same pair. */
  peakShares: number[]
}
const rows: Row[] = []
interface Distant {
  site: string
  files: number
  latencyMs: number
  deployConcurrency: number
  bareConcurrency: number
  deployMs: number
  bareMs: number
  ratio: number
  peakRssMib: number
}
const distant: Distant[] = []
interface FaultRuns {
  files: number
  mib: number
  latencyMs: number
  requestTimeoutS: number
  faults: string
  /** Without faults, at the same latency. */
  cleanMs: number
  faultMs: number
  ratio: number
  /** Log lines of the fault run that announce a change of concurrency (median of the runs). */
  concurrencyLines: number
  retryLines: number
  /** The most retries of one part in a run (median of the runs). */
  mostRetries: number
  baselines: Array<{
    build: string
    cleanMs: number
    faultMs: number
    ratio: number
    concurrencyLines: number
    mostRetries: number
  }>
}
let faultRuns: FaultRuns | undefined
interface BaselineRuns {
  build: string
  ms: number
  /** Its time / the bare uploader's, median of the pairs. */
  bareRatio: number
  /** This build's time / its, median of the pairs. */
  thisRatio: number
  peakRssMib: number
}
interface Discarded {
  site: string
  files: number
  deployMs: number
  bareMs: number
  ratio: number
  peakRssMib: number
  baselines: BaselineRuns[]
}
const discarded: Discarded[] = []
interface LayoutRun {
  layout: string
  files: number
  build: string
  dryRunMs: number
  deployMs: number
  dryRunPeakMib: number
  deployPeakMib: number
  /** Of each run at 20,000 files or more: the higher peak of its dry run and deploy / the bare uploader's peak in the same run. */
  peakShares: number[]
}
const layoutRuns: LayoutRun[] = []
const sweep: Array<{
  latencyMs: number
  concurrency: number
  deployMs: number
  bareMs: number
  ratio: number
  peakRssMib: number
  bareRssMib: number
}> = []
const started = Date.now()

try {
  await mkdir(work, { recursive: true })
  const startupMs = await measureStartup()
  console.log(`start-up of dist/index.js to its first line: ${startupMs.toFixed(0)} ms (median of 11)`)

  for (const name of siteNames) {
    const spec = specs[name]!
    const dir = path.join(work, name)
    const built = await buildSite(dir, spec)
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
      if (name === 'mixed' && values.sweep) {
        for (const latency of values['sweep-latencies'].split(',').map(Number)) {
          const far = await startEmulatorProcess(latency)
          try {
            for (const c of values.sweep.split(',')) {
              console.log(`  sweep: ${latency} ms per PUT, concurrency ${c}`)
              const p = await pairedRuns(far.url, dir, c, c, repeats)
              sweep.push({ latencyMs: latency, concurrency: Number(c), ...p })
            }
          } finally {
            await far.stop()
          }
        }
      }
      const row: Row = {
        site: name,
        files: built.files,
        mib: built.bytes / MiB,
        deployMs: pairs.deployMs,
        bareMs: pairs.bareMs,
        ratio: pairs.ratio,
        hashMs: median(hashes),
        scanMs: median(scans),
        sha256sumMs: median(sums),
        hashRatio: median(hashes) / median(sums),
        peakRssMib: pairs.peakRssMib,
        bareRssMib: pairs.bareRssMib,
        peakShares: pairs.peakShares,
      }
      rows.push(row)
    } finally {
      await emulator.stop()
      await rm(dir, { recursive: true, force: true })
    }
  }

  for (const name of distantSites) {
    const dir = path.join(work, `distant-${name}`)
    const built = await buildSite(dir, specs[name]!)
    try {
      for (const latency of latencies) {
        const far = await startEmulatorProcess(latency)
        try {
          console.log(
            `\n${name} (${built.files} files), each PUT answered after ${latency} ms: deploy at concurrency ${concurrency}, bare at ${values['distant-concurrency']}`,
          )
          const p = await pairedRuns(
            far.url,
            dir,
            concurrency,
            values['distant-concurrency'],
            Number(values.repeats),
          )
          distant.push({
            site: name,
            files: built.files,
            latencyMs: latency,
            deployConcurrency: Number(concurrency),
            bareConcurrency: Number(values['distant-concurrency']),
            ...p,
          })
        } finally {
          await far.stop()
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }

  for (const name of discardSites) {
    const dir = path.join(work, `discard-${name}`)
    const built = await buildSite(dir, specs[name]!)
    const store = await startEmulatorProcess(0, { discard: true })
    try {
      console.log(`\n${name} (${built.files} files) against a store that keeps no byte`)
      const p = await pairedRuns(store.url, dir, concurrency, concurrency, Number(values.repeats))
      discarded.push({ site: name, files: built.files, ...p })
    } finally {
      await store.stop()
      await rm(dir, { recursive: true, force: true })
    }
  }

  for (const layout of layouts) {
    for (const files of layoutFiles) layoutRuns.push(...(await measureLayout(layout, files)))
  }

  if (runFaults) faultRuns = await measureFaults()
  const smoke = Number(values.smoke) > 0 ? await measureSmoke(Number(values.smoke)) : undefined
  if (smoke) console.log(describeSmokeCost(smoke))

  const table = renderTable(rows, startupMs, distant, sweep, faultRuns, discarded, layoutRuns)
  console.log(`\n${table}`)
  const result = {
    date: new Date().toISOString(),
    machine: `${os.cpus()[0]?.model ?? 'unknown cpu'}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`,
    concurrency: Number(concurrency),
    repeats: Number(values.repeats),
    scalingRepeats: Number(values['scaling-repeats']),
    startupMs,
    rows,
    distant,
    sweep,
    faults: faultRuns,
    discarded,
    layouts: layoutRuns,
    smoke,
    targets: targets(rows, startupMs, distant, faultRuns, discarded, layoutRuns),
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

/**
 * Deploy and bare upload in pairs, alternating which goes first so neither always meets a warmer
 * cache; the ratio is the median of the pairs' ratios (each pair ran under the same load).
 */
async function pairedRuns(
  url: string,
  dir: string,
  deployConcurrency: string,
  bareConcurrency: string,
  repeats: number,
) {
  const deploys: number[] = []
  const bares: number[] = []
  const rss: number[] = []
  const bareRss: number[] = []
  const others = baselines.map(() => ({ ms: [] as number[], rss: [] as number[] }))
  for (let i = 0; i < repeats; i++) {
    const order: Array<'deploy' | 'bare' | number> = i % 2 === 0 ? ['deploy', 'bare'] : ['bare', 'deploy']
    // Each baseline at a place of its own that moves from pair to pair.
    baselines.forEach((_, b) => order.splice((i + b) % (order.length + 1), 0, b))
    for (const which of order) {
      if (typeof which === 'number') {
        const r = await timeDeploy(url, dir, deployConcurrency, baselines[which])
        others[which]!.ms.push(r.ms)
        others[which]!.rss.push(r.peakRss)
      } else if (which === 'deploy') {
        const r = await timeDeploy(url, dir, deployConcurrency)
        deploys.push(r.ms)
        rss.push(r.peakRss)
      } else {
        const r = await timeBare(url, dir, bareConcurrency)
        bares.push(r.ms)
        bareRss.push(r.peakRss)
      }
    }
    // Each run's peak too: the table keeps the highest, and a peak can differ from run to run.
    const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`
    process.stdout.write(
      `  run ${i + 1}/${repeats}: deploy ${deploys.at(-1)!.toFixed(0)} ms (${mib(rss.at(-1)!)}), ` +
        `bare ${bares.at(-1)!.toFixed(0)} ms (${mib(bareRss.at(-1)!)})` +
        others
          .map((o, b) => `, ${baselineName(b)} ${o.ms.at(-1)!.toFixed(0)} ms (${mib(o.rss.at(-1)!)})`)
          .join('') +
        '\n',
    )
  }
  const baselineRuns = others.map((o, b): BaselineRuns => ({
    build: baselines[b]!,
    ms: median(o.ms),
    bareRatio: median(o.ms.map((m, i) => m / bares[i]!)),
    thisRatio: median(deploys.map((d, i) => d / o.ms[i]!)),
    peakRssMib: Math.max(...o.rss) / 1024,
  }))
  others.forEach((o, b) => {
    console.log(
      `  ${baselineName(b)}: ${median(o.ms).toFixed(0)} ms, / bare ${median(o.ms.map((m, i) => m / bares[i]!)).toFixed(2)}x, ` +
        `deploy / it ${median(deploys.map((d, i) => d / o.ms[i]!)).toFixed(2)}x, peak RSS ${(Math.max(...o.rss) / 1024).toFixed(0)} MiB`,
    )
  })
  return {
    deployMs: median(deploys),
    bareMs: median(bares),
    ratio: median(deploys.map((d, i) => d / bares[i]!)),
    peakRssMib: Math.max(...rss) / 1024,
    bareRssMib: Math.max(...bareRss) / 1024,
    peakShares: rss.map((r, i) => r / bareRss[i]!),
    baselines: baselineRuns,
  }
}

/** `baseline` when there is one, `baseline N` (1-based) among several. */
function baselineName(index: number): string {
  return baselines.length === 1 ? 'baseline' : `baseline ${index + 1}`
}

async function timeDeploy(
  url: string,
  dir: string,
  c: string,
  entry = path.join(root, 'dist/index.js'),
  inputs: Record<string, string> = {},
): Promise<{ ms: number; peakRss: number; log: string }> {
  const sampler = rssSampler()
  const t = performance.now()
  const run = await runAction({
    entry,
    defaults,
    cwd: root,
    inputs: {
      'api-url': url,
      token: 'gamehost-demo-token',
      'game-id': '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
      path: dir,
      concurrency: c,
      ...inputs,
    },
    nodeArgs: sampler.nodeArgs,
    env: sampler.env,
    onSpawn: sampler.watch,
  })
  const ms = performance.now() - t
  if (run.exitCode !== 0) throw new Error(`the deploy failed:\n${run.stdout}${run.stderr}`)
  return { ms, peakRss: await sampler.stop(), log: run.stdout }
}

/**
 * The dry run and the deploy of `files` small files laid out as `layout` says, against a store that
 * keeps no byte, by this build and each baseline in turn (the order moving from run to run): the
 * median time of each, and its peak RSS.
 */
async function measureLayout(layout: string, files: number): Promise<LayoutRun[]> {
  const dir = path.join(work, `${layout}-${files}`)
  await buildSite(dir, { smallFiles: files, bigFiles: 0, bigBytes: 0, perFolder: FILES_A_FOLDER[layout] })
  const store = await startEmulatorProcess(0, { discard: true })
  const builds = [path.join(root, 'dist/index.js'), ...baselines]
  const runs = builds.map(() => ({
    dry: [] as number[],
    deploy: [] as number[],
    dryRss: [] as number[],
    rss: [] as number[],
    shares: [] as number[],
  }))
  const repeats = Number(values['scaling-repeats'])
  const bareToo = files >= 20_000
  console.log(`\n${layout}-${files}: dry run and deploy, against a store that keeps no byte`)
  try {
    for (let i = 0; i < repeats; i++) {
      for (let k = 0; k < builds.length; k++) {
        const b = (i + k) % builds.length
        const dry = await timeDeploy(store.url, dir, concurrency, builds[b], { 'dry-run': 'true' })
        const deploy = await timeDeploy(store.url, dir, concurrency, builds[b])
        runs[b]!.dry.push(dry.ms)
        runs[b]!.dryRss.push(dry.peakRss)
        runs[b]!.deploy.push(deploy.ms)
        runs[b]!.rss.push(deploy.peakRss)
        const bare = bareToo ? await timeBare(store.url, dir, concurrency) : undefined
        if (bare) runs[b]!.shares.push(Math.max(dry.peakRss, deploy.peakRss) / bare.peakRss)
        console.log(
          `  run ${i + 1}/${repeats}, ${b ? baselineName(b - 1) : 'this'}: dry run ${dry.ms.toFixed(0)} ms ` +
            `(${(dry.peakRss / 1024).toFixed(0)} MiB), deploy ${deploy.ms.toFixed(0)} ms (${(deploy.peakRss / 1024).toFixed(0)} MiB)` +
            (bare ? `, bare upload ${(bare.peakRss / 1024).toFixed(0)} MiB` : ''),
        )
      }
    }
  } finally {
    await store.stop()
    await rm(dir, { recursive: true, force: true })
  }
  return builds.map((build, b) => ({
    layout,
    files,
    build: b ? build : 'this',
    dryRunMs: median(runs[b]!.dry),
    deployMs: median(runs[b]!.deploy),
    dryRunPeakMib: Math.max(...runs[b]!.dryRss) / 1024,
    deployPeakMib: Math.max(...runs[b]!.rss) / 1024,
    peakShares: runs[b]!.shares,
  }))
}

/**
 * The README's fault example against the same deploy without faults, at the same latency (an
 * emulator without faults for all the runs without, a new one with --faults for each run with), the
 * runs alternating which goes first; the ratio is the median of the pairs' ratios. Every build (this
 * one and each baseline) runs both in each pair. The stalled PUTs wait --fault-request-timeout, and
 * a part refused several times in a row waits out the retries' backoff: both bound the time with
 * faults whatever the concurrency, which is why the table gives the most retries of a part.
 */
async function measureFaults(): Promise<FaultRuns> {
  const dir = path.join(work, 'faults')
  const built = await buildSite(dir, faultSite)
  const latency = Number(values['fault-latency'])
  const timeout = values['fault-request-timeout']
  console.log(
    `\nfaults: ${built.files} files, ${(built.bytes / MiB).toFixed(1)} MiB, ${latency} ms before every request, ` +
      `request-timeout ${timeout} s, concurrency ${concurrency}; faults ${values.faults}`,
  )
  const clean = await startEmulatorProcess(0, { latency, faults: undefined })
  const builds = [undefined, ...baselines]
  const runs = builds.map(() => ({
    clean: [] as number[],
    fault: [] as number[],
    lines: [] as number[],
    retries: [] as number[],
    /** The most retries of one part: the exponential backoff of its waits is the run's tail. */
    most: [] as number[],
  }))
  const repeats = Number(values.repeats)
  try {
    for (let i = 0; i < repeats; i++) {
      for (const [b, entry] of builds.entries()) {
        const order = (i + b) % 2 === 0 ? ['clean', 'fault'] : ['fault', 'clean']
        for (const which of order) {
          const inputs = { 'request-timeout': timeout }
          if (which === 'clean') {
            runs[b]!.clean.push((await timeDeploy(clean.url, dir, concurrency, entry, inputs)).ms)
            continue
          }
          // An emulator of its own for each run: every run meets the same faults from the same seed
          // (its stalls are the first PUTs an emulator gets).
          const faulty = await startEmulatorProcess(0, { latency, faults: values.faults })
          try {
            const r = await timeDeploy(faulty.url, dir, concurrency, entry, inputs)
            runs[b]!.fault.push(r.ms)
            const lines = r.log.split('\n')
            runs[b]!.lines.push(lines.filter((l) => /uploads at a time/i.test(l)).length)
            const retries = lines.flatMap((l) => /; retry (\d+) of \d+/.exec(l)?.[1] ?? [])
            runs[b]!.retries.push(retries.length)
            runs[b]!.most.push(Math.max(0, ...retries.map(Number)))
          } finally {
            await faulty.stop()
          }
        }
        const run = runs[b]!
        console.log(
          `  run ${i + 1}/${repeats}${b ? `, ${baselineName(b - 1)}` : ''}: without faults ${run.clean.at(-1)!.toFixed(0)} ms, ` +
            `with faults ${run.fault.at(-1)!.toFixed(0)} ms (${run.lines.at(-1)} lines on concurrency, ` +
            `${run.retries.at(-1)} retries logged, at most ${run.most.at(-1)} of one part)`,
        )
      }
    }
  } finally {
    await clean.stop()
    await rm(dir, { recursive: true, force: true })
  }
  const summary = (b: number) => {
    const run = runs[b]!
    return {
      cleanMs: median(run.clean),
      faultMs: median(run.fault),
      ratio: median(run.fault.map((f, i) => f / run.clean[i]!)),
      concurrencyLines: median(run.lines),
      mostRetries: median(run.most),
    }
  }
  const result: FaultRuns = {
    files: built.files,
    mib: built.bytes / MiB,
    latencyMs: latency,
    requestTimeoutS: Number(timeout),
    faults: values.faults,
    ...summary(0),
    retryLines: median(runs[0]!.retries),
    baselines: baselines.map((build, b) => ({ build, ...summary(b + 1) })),
  }
  for (const [b, other] of result.baselines.entries()) {
    console.log(
      `  ${baselineName(b)}: without faults ${other.cleanMs.toFixed(0)} ms, with faults ${other.faultMs.toFixed(0)} ms, ` +
        `${other.ratio.toFixed(2)}x, ${other.concurrencyLines} lines on concurrency, at most ${other.mostRetries} retries of a part`,
    )
  }
  return result
}

async function timeBare(url: string, dir: string, c: string): Promise<{ ms: number; peakRss: number }> {
  const sampler = rssSampler()
  const args = [
    '--api-url',
    url,
    '--token',
    'gamehost-demo-token',
    '--game-id',
    '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
    '--path',
    dir,
  ]
  const ms = await timeCommand(
    process.execPath,
    [...sampler.nodeArgs, path.join(root, 'scripts/bench/bare-upload.ts'), ...args, '--concurrency', c],
    root,
    sampler.watch,
    sampler.env,
  )
  return { ms, peakRss: await sampler.stop() }
}

/** The deploy's hashing phase over a site, as timed inside its own process. */
function hashPhase(dir: string): Promise<{ ms: number; scanMs: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts/bench/hash-only.ts'), '--path', dir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => {
      // @actions/glob writes ::debug:: lines to stdout too: the figure is the last line.
      const last = out.trim().split('\n').pop() ?? ''
      try {
        if (code !== 0) throw new Error(`hash-only exited with ${code}`)
        resolve(JSON.parse(last) as { ms: number; scanMs: number })
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)))
      }
    })
  })
}

function timeCommand(
  cmd: string,
  args: string[],
  cwd = root,
  onSpawn?: (pid: number) => void,
  env: Record<string, string> = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = performance.now()
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    if (child.pid !== undefined) onSpawn?.(child.pid)
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0
        ? resolve(performance.now() - t)
        : reject(new Error(`${cmd} ${args.join(' ')}: ${code}\n${stderr}`)),
    )
  })
}

/**
 * Peak RSS (KiB) of a process: the kernel's high-water mark, sampled from /proc until the process
 * ends; where there is no /proc (macOS, Windows), the process's own maxRSS, written at its exit by a
 * preloaded module (`nodeArgs` and `env` go to the process measured).
 */
function rssSampler(): {
  nodeArgs: string[]
  env: Record<string, string>
  watch: (pid: number) => void
  stop: () => Promise<number>
} {
  if (!existsSync('/proc/self/status')) {
    const file = path.join(work, `max-rss-${randomUUID()}`)
    return {
      nodeArgs: ['--import', pathToFileURL(path.join(root, 'scripts/bench/max-rss.ts')).href],
      env: { GAMEHOST_BENCH_MAXRSS: file },
      watch: () => {},
      stop: async () => Number(await readFile(file, 'utf8').catch(() => '0')),
    }
  }
  let peak = 0
  let timer: NodeJS.Timeout | undefined
  return {
    nodeArgs: [],
    env: {},
    watch(pid) {
      const sample = async () => {
        const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '')
        const hwm = /VmHWM:\s+(\d+) kB/.exec(status)
        if (hwm) peak = Math.max(peak, Number(hwm[1]))
      }
      void sample()
      timer = setInterval(() => void sample(), 10)
    },
    stop() {
      clearInterval(timer)
      return Promise.resolve(peak)
    },
  }
}

async function measureStartup(): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < 11; i++) {
    times.push(
      await new Promise<number>((resolve, reject) => {
        const t = performance.now()
        const child = spawn(process.execPath, [path.join(root, 'dist/index.js')], {
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { PATH: process.env.PATH },
        })
        child.stdout.once('data', () => resolve(performance.now() - t))
        child.on('error', reject)
      }),
    )
  }
  return median(times)
}

async function startEmulatorProcess(
  putLatencyMs: number,
  more: { latency?: number; faults?: string | undefined; discard?: boolean } = {},
): Promise<{ url: string; stop: () => Promise<void> }> {
  const args = ['--put-latency', String(putLatencyMs), '--latency', String(more.latency ?? 0)]
  if (more.faults !== undefined) args.push('--faults', more.faults)
  if (more.discard) args.push('--discard')
  const child = spawn(process.execPath, [path.join(root, 'scripts/bench/emulator.ts'), ...args], {
    cwd: root,
    env: { ...process.env, TMPDIR: storageTmp },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  // However this process ends, the emulator ends with it.
  const killChild = () => child.kill('SIGTERM')
  process.once('exit', killChild)
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    const onData = (d: Buffer) => {
      out += d.toString()
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m) {
        child.stdout.off('data', onData)
        child.stdout.resume()
        resolve(m[1]!)
      }
    }
    child.stdout.on('data', onData)
    child.on('exit', (code) => reject(new Error(`the emulator exited (${code})`)))
  })
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        process.off('exit', killChild)
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

function renderTable(
  rows: Row[],
  startupMs: number,
  far: Distant[],
  swept: typeof sweep,
  faults: FaultRuns | undefined,
  kept: Discarded[],
  laid: LayoutRun[],
): string {
  const lines = [
    `Concurrency ${concurrency} for both (the action's default unless --concurrency); one PUT per file; deploy / bare is the median of paired runs.`,
    '',
    '| site | files | MiB | deploy | bare upload (node:http) | deploy / bare | hashing (scan) | sha256sum | hashing / sha256sum | peak RSS deploy | peak RSS bare |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.site} | ${r.files} | ${r.mib.toFixed(0)} | ${s(r.deployMs)} | ${s(r.bareMs)} | ${r.ratio.toFixed(2)}x | ${s(r.hashMs)} (${r.scanMs.toFixed(0)} ms) | ${s(r.sha256sumMs)} | ${r.hashRatio.toFixed(2)}x | ${r.peakRssMib.toFixed(0)} MiB | ${r.bareRssMib.toFixed(0)} MiB |`,
    ),
  ]
  if (far.length) {
    lines.push(
      '',
      'Each PUT answered after the given ms (a store as far as a CI runner sees it); the deploy at its defaults:',
      '',
      '| site | files | ms per PUT | deploy (concurrency) | bare upload (concurrency) | deploy / bare | peak RSS deploy |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...far.map(
        (d) =>
          `| ${d.site} | ${d.files} | ${d.latencyMs} | ${s(d.deployMs)} (${d.deployConcurrency}) | ${s(d.bareMs)} (${d.bareConcurrency}) | ${d.ratio.toFixed(2)}x | ${d.peakRssMib.toFixed(0)} MiB |`,
      ),
    )
  }
  if (faults) {
    lines.push(
      '',
      `Faults: ${faults.files} files (${faults.mib.toFixed(0)} MiB), ${faults.latencyMs} ms before every request, request-timeout ${faults.requestTimeoutS} s, faults ${faults.faults}:`,
      '',
      '| build | without faults | with faults | with / without | log lines on concurrency | most retries of a part |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      `| this | ${s(faults.cleanMs)} | ${s(faults.faultMs)} | ${faults.ratio.toFixed(2)}x | ${faults.concurrencyLines} | ${faults.mostRetries} |`,
      ...faults.baselines.map(
        (b) =>
          `| ${path.basename(b.build)} | ${s(b.cleanMs)} | ${s(b.faultMs)} | ${b.ratio.toFixed(2)}x | ${b.concurrencyLines} | ${b.mostRetries} |`,
      ),
    )
  }
  if (swept.length) {
    lines.push(
      '',
      'Sweep of the mixed site (deploy and bare upload at the same concurrency):',
      '',
      '| ms per PUT | concurrency | deploy | bare upload | deploy / bare | peak RSS deploy | peak RSS bare |',
      '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...swept.map(
        (w) =>
          `| ${w.latencyMs} | ${w.concurrency} | ${s(w.deployMs)} | ${s(w.bareMs)} | ${w.ratio.toFixed(2)}x | ${w.peakRssMib.toFixed(0)} MiB | ${w.bareRssMib.toFixed(0)} MiB |`,
      ),
    )
  }
  if (kept.length) {
    lines.push(
      '',
      'Against a store that keeps no byte (no disk, no MD5): what each costs per file.',
      '',
      '| site | files | build | time | / bare upload | this / it | peak RSS |',
      '| --- | ---: | --- | ---: | ---: | ---: | ---: |',
      ...kept.flatMap((d) => [
        `| ${d.site} | ${d.files} | this | ${s(d.deployMs)} | ${d.ratio.toFixed(2)}x | | ${d.peakRssMib.toFixed(0)} MiB |`,
        ...d.baselines.map(
          (b) =>
            `| ${d.site} | ${d.files} | ${path.basename(path.dirname(path.dirname(b.build)))} | ${s(b.ms)} | ${b.bareRatio.toFixed(2)}x | ${b.thisRatio.toFixed(2)}x | ${b.peakRssMib.toFixed(0)} MiB |`,
        ),
        `| ${d.site} | ${d.files} | bare upload | ${s(d.bareMs)} | | | |`,
      ]),
    )
  }
  if (laid.length) {
    lines.push(
      '',
      'Layouts, against a store that keeps no byte: flat is one folder, folders one file a folder, small 100 a folder.',
      '',
      '| layout | files | build | dry run | x the fewest | deploy | x the fewest | peak RSS dry run | peak RSS deploy |',
      '| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...laid.map((r) => {
        const fewest = fewestOf(laid, r)
        return `| ${r.layout} | ${r.files} | ${r.build === 'this' ? 'this' : path.basename(path.dirname(path.dirname(r.build)))} | ${s(r.dryRunMs)} | ${(r.dryRunMs / fewest.dryRunMs).toFixed(2)}x | ${s(r.deployMs)} | ${(r.deployMs / fewest.deployMs).toFixed(2)}x | ${r.dryRunPeakMib.toFixed(0)} MiB | ${r.deployPeakMib.toFixed(0)} MiB |`
      }),
    )
  }
  lines.push('', `Start-up of dist/index.js to its first line: ${startupMs.toFixed(0)} ms.`)
  lines.push('', '| target | measured | met |', '| --- | ---: | :---: |')
  for (const t of targets(rows, startupMs, far, faults, kept, laid))
    lines.push(`| ${t.target} | ${t.measured} | ${t.met ? 'yes' : 'NO'} |`)
  return lines.join('\n')
}

interface Target {
  target: string
  measured: string
  met: boolean
}

/**
 * Each pair's own deploy peak against its bare uploader's, the worst reported: the highest peak
 * against the highest would hide a pair over.
 */
function peakInEveryRun(what: string, shares: number[]): Target {
  const worst = Math.max(...shares)
  return {
    target: `${what}: peak RSS <= 0.8x the bare uploader's in every run`,
    measured: `${worst.toFixed(2)}x (worst of ${shares.length})`,
    met: worst <= 0.8,
  }
}

/** The run of the same layout and build with the fewest files. */
function fewestOf(laid: LayoutRun[], run: LayoutRun): LayoutRun {
  const same = laid.filter((r) => r.layout === run.layout && r.build === run.build)
  return same.reduce((a, b) => (b.files < a.files ? b : a))
}

/** The bounds the project holds itself to, for the sites this run measured. */
function targets(
  rows: Row[],
  startupMs: number,
  far: Distant[],
  faults: FaultRuns | undefined,
  kept: Discarded[] = [],
  laid: LayoutRun[] = [],
): Target[] {
  const site = (name: string) => rows.find((r) => r.site === name)
  const found: Target[] = []
  for (const d of kept) {
    found.push({
      target: `${d.site}, a store that keeps no byte: deploy <= 1.10x the bare uploader`,
      measured: `${d.ratio.toFixed(2)}x`,
      met: d.ratio <= 1.1,
    })
    for (const b of d.baselines) {
      found.push({
        target: `${d.site}, a store that keeps no byte: no slower than ${b.build}`,
        measured: `${b.thisRatio.toFixed(2)}x`,
        met: b.thisRatio <= 1,
      })
    }
  }
  for (const r of laid.filter((run) => run.build === 'this')) {
    const fewest = fewestOf(laid, r)
    if (fewest.files === r.files) continue
    const bound = (4.5 * r.files) / fewest.files / 4
    for (const [what, ms, fewestMs] of [
      ['dry run', r.dryRunMs, fewest.dryRunMs],
      ['deploy', r.deployMs, fewest.deployMs],
    ] as const) {
      found.push({
        target: `${r.layout}: ${what} of ${r.files} files <= ${bound.toFixed(2)}x that of ${fewest.files}`,
        measured: `${(ms / fewestMs).toFixed(2)}x`,
        met: ms / fewestMs <= bound,
      })
    }
  }
  for (const r of laid.filter((run) => run.build === 'this' && run.peakShares.length)) {
    found.push(peakInEveryRun(`${r.layout}-${r.files}`, r.peakShares))
  }
  const mixed = site('mixed')
  if (mixed)
    found.push({
      target: 'mixed site: deploy <= 1.10x the bare uploader',
      measured: `${mixed.ratio.toFixed(2)}x`,
      met: mixed.ratio <= 1.1,
    })
  const many = site('small-20000')
  if (many) found.push(peakInEveryRun('20,000 small files', many.peakShares))
  const big = site('big')
  if (big)
    found.push({
      target: `one ${big.mib.toFixed(0)} MiB file: peak RSS <= 160 MiB`,
      measured: `${big.peakRssMib.toFixed(0)} MiB`,
      met: big.peakRssMib <= 160,
    })
  for (const d of far) {
    found.push({
      target: `${d.site} (${d.files} files), ${d.latencyMs} ms per PUT: deploy at its defaults <= 1.00x the bare uploader at ${d.bareConcurrency}`,
      measured: `${d.ratio.toFixed(2)}x`,
      met: d.ratio <= 1,
    })
  }
  if (faults)
    found.push({
      target: `the README's faults, ${faults.latencyMs} ms: deploy <= 3x the deploy without faults`,
      measured: `${faults.ratio.toFixed(2)}x`,
      met: faults.ratio <= 3,
    })
  found.push({
    target: 'start-up of dist/index.js < 150 ms',
    measured: `${startupMs.toFixed(0)} ms`,
    met: startupMs < 150,
  })
  return found
}

function s(ms: number): string {
  return `${(ms / 1000).toFixed(2)} s`
}
