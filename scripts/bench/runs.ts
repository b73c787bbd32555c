// The bench's repeated runs: the deploy and the bare uploader in pairs (with each --baseline), the
// layouts' dry runs and deploys, and the fault runs.
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { baselines, concurrency, FILES_A_FOLDER, faultSite, MiB, root, values, work } from './options.ts'
import { median, startEmulatorProcess, timeBare, timeDeploy, type Timed } from './processes.ts'
import type { BaselineRuns, FaultRuns, FaultSummary, LayoutRun, Paired } from './report.ts'
import { buildSite } from './site.ts'

const asMib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`

/** `baseline` when there is one, `baseline N` (1-based) among several. */
export function baselineName(index: number): string {
  return baselines.length === 1 ? 'baseline' : `baseline ${index + 1}`
}

/**
 * Deploy and bare upload in pairs, alternating which goes first so neither always meets a warmer
 * cache, each baseline at a place of its own that moves from pair to pair; the ratio is the median
 * of the pairs' ratios (each pair ran under the same load).
 */
export async function pairedRuns(
  url: string,
  dir: string,
  deployConcurrency: string,
  bareConcurrency: string,
  repeats: number,
): Promise<Paired> {
  const deploys: Timed[] = []
  const bares: Timed[] = []
  const others = baselines.map((): Timed[] => [])
  for (let i = 0; i < repeats; i++) {
    const order: Array<'deploy' | 'bare' | number> = i % 2 === 0 ? ['deploy', 'bare'] : ['bare', 'deploy']
    baselines.forEach((_, b) => order.splice((i + b) % (order.length + 1), 0, b))
    for (const which of order) {
      if (typeof which === 'number')
        others[which]!.push(await timeDeploy(url, dir, deployConcurrency, baselines[which]))
      else if (which === 'deploy') deploys.push(await timeDeploy(url, dir, deployConcurrency))
      else bares.push(await timeBare(url, dir, bareConcurrency))
    }
    // Each run's peak too: the table keeps the highest, and a peak can differ from run to run.
    const line = (name: string, runs: Timed[]) =>
      `${name} ${runs.at(-1)!.ms.toFixed(0)} ms (${asMib(runs.at(-1)!.peakRss)})`
    console.log(
      `  run ${i + 1}/${repeats}: ${[line('deploy', deploys), line('bare', bares), ...others.map((o, b) => line(baselineName(b), o))].join(', ')}`,
    )
  }
  const ms = (runs: Timed[]) => runs.map((r) => r.ms)
  const peakMib = (runs: Timed[]) => Math.max(...runs.map((r) => r.peakRss)) / 1024
  const baselineRuns = others.map((o, b): BaselineRuns => ({
    build: baselines[b]!,
    ms: median(ms(o)),
    bareRatio: median(o.map((r, i) => r.ms / bares[i]!.ms)),
    thisRatio: median(deploys.map((d, i) => d.ms / o[i]!.ms)),
    peakRssMib: peakMib(o),
  }))
  for (const [b, r] of baselineRuns.entries()) {
    console.log(
      `  ${baselineName(b)}: ${r.ms.toFixed(0)} ms, / bare ${r.bareRatio.toFixed(2)}x, deploy / it ${r.thisRatio.toFixed(2)}x, peak RSS ${r.peakRssMib.toFixed(0)} MiB`,
    )
  }
  return {
    deployMs: median(ms(deploys)),
    bareMs: median(ms(bares)),
    ratio: median(deploys.map((d, i) => d.ms / bares[i]!.ms)),
    peakRssMib: peakMib(deploys),
    bareRssMib: peakMib(bares),
    peakShares: deploys.map((d, i) => d.peakRss / bares[i]!.peakRss),
    baselines: baselineRuns,
  }
}

/**
 * The dry run and the deploy of `files` small files laid out as `layout` says, against a store that
 * keeps no byte, by this build and each baseline in turn (the order moving from run to run): the
 * median time of each, and its peak RSS. At 20,000 files or more the bare uploader runs after each
 * build's pair too, for the peak check of every run.
 */
export async function measureLayout(layout: string, files: number): Promise<LayoutRun[]> {
  const dir = path.join(work, `${layout}-${files}`)
  await buildSite(dir, { smallFiles: files, bigFiles: 0, bigBytes: 0, perFolder: FILES_A_FOLDER[layout] })
  const store = await startEmulatorProcess(0, { discard: true })
  const builds = [path.join(root, 'dist/index.js'), ...baselines]
  const runs = builds.map(() => ({ dry: [] as Timed[], deploy: [] as Timed[], shares: [] as number[] }))
  const repeats = Number(values['scaling-repeats'])
  console.log(`\n${layout}-${files}: dry run and deploy, against a store that keeps no byte`)
  try {
    for (let i = 0; i < repeats; i++) {
      for (let k = 0; k < builds.length; k++) {
        const b = (i + k) % builds.length
        const dry = await timeDeploy(store.url, dir, concurrency, builds[b], { 'dry-run': 'true' })
        const deploy = await timeDeploy(store.url, dir, concurrency, builds[b])
        runs[b]!.dry.push(dry)
        runs[b]!.deploy.push(deploy)
        const bare = files >= 20_000 ? await timeBare(store.url, dir, concurrency) : undefined
        if (bare) runs[b]!.shares.push(Math.max(dry.peakRss, deploy.peakRss) / bare.peakRss)
        console.log(
          `  run ${i + 1}/${repeats}, ${b ? baselineName(b - 1) : 'this'}: dry run ${dry.ms.toFixed(0)} ms ` +
            `(${asMib(dry.peakRss)}), deploy ${deploy.ms.toFixed(0)} ms (${asMib(deploy.peakRss)})` +
            (bare ? `, bare upload ${asMib(bare.peakRss)}` : ''),
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
    dryRunMs: median(runs[b]!.dry.map((r) => r.ms)),
    deployMs: median(runs[b]!.deploy.map((r) => r.ms)),
    dryRunPeakMib: Math.max(...runs[b]!.dry.map((r) => r.peakRss)) / 1024,
    deployPeakMib: Math.max(...runs[b]!.deploy.map((r) => r.peakRss)) / 1024,
    peakShares: runs[b]!.shares,
  }))
}

interface FaultTally {
  clean: number[]
  fault: number[]
  retries: number[]
  /** The most retries of one request: the backoff of its waits is the run's tail. */
  most: number[]
}

/**
 * The README's fault example against the same deploy without faults, at the same latency (an
 * emulator without faults for all the runs without, a new one with --faults for each run with), the
 * runs alternating which goes first; the ratio is the median of the pairs' ratios. Every build (this
 * one and each baseline) runs both in each pair. The stalled PUTs wait --fault-request-timeout, and
 * a file refused several times in a row waits out the retries' backoff: both bound the time with
 * faults whatever the concurrency, which is why the table gives the most retries of a request.
 */
export async function measureFaults(): Promise<FaultRuns> {
  const dir = path.join(work, 'faults')
  const built = await buildSite(dir, faultSite)
  const latency = Number(values['fault-latency'])
  const timeout = values['fault-request-timeout']
  console.log(
    `\nfaults: ${built.files} files, ${(built.bytes / MiB).toFixed(1)} MiB, ${latency} ms before every request, ` +
      `request-timeout ${timeout} s, concurrency ${concurrency}; faults ${values.faults}`,
  )
  const clean = await startEmulatorProcess(0, { latency })
  const builds = [undefined, ...baselines]
  const tallies = builds.map((): FaultTally => ({ clean: [], fault: [], retries: [], most: [] }))
  const repeats = Number(values.repeats)
  try {
    for (let i = 0; i < repeats; i++) {
      for (const [b, entry] of builds.entries()) {
        const tally = tallies[b]!
        const deploy = async (url: string) =>
          timeDeploy(url, dir, concurrency, entry, { 'request-timeout': timeout })
        for (const which of (i + b) % 2 === 0 ? ['clean', 'fault'] : ['fault', 'clean']) {
          if (which === 'clean') tally.clean.push((await deploy(clean.url)).ms)
          else countFaultRun(tally, await withFaults(latency, deploy))
        }
        console.log(
          `  run ${i + 1}/${repeats}${b ? `, ${baselineName(b - 1)}` : ''}: without faults ${tally.clean.at(-1)!.toFixed(0)} ms, ` +
            `with faults ${tally.fault.at(-1)!.toFixed(0)} ms (${tally.retries.at(-1)} retries logged, at most ${tally.most.at(-1)} of one request)`,
        )
      }
    }
  } finally {
    await clean.stop()
    await rm(dir, { recursive: true, force: true })
  }
  const result: FaultRuns = {
    files: built.files,
    mib: built.bytes / MiB,
    latencyMs: latency,
    requestTimeoutS: Number(timeout),
    faults: values.faults,
    ...summary(tallies[0]!),
    retryLines: median(tallies[0]!.retries),
    baselines: baselines.map((build, b) => ({ build, ...summary(tallies[b + 1]!) })),
  }
  for (const [b, other] of result.baselines.entries()) {
    console.log(
      `  ${baselineName(b)}: without faults ${other.cleanMs.toFixed(0)} ms, with faults ${other.faultMs.toFixed(0)} ms, ` +
        `${other.ratio.toFixed(2)}x, at most ${other.mostRetries} retries of a request`,
    )
  }
  return result
}

/**
 * A run with faults, against an emulator of its own: every run meets the same faults from the same
 * seed (its stalls are the first PUTs an emulator gets).
 */
async function withFaults<T>(latency: number, run: (url: string) => Promise<T>): Promise<T> {
  const faulty = await startEmulatorProcess(0, { latency, faults: values.faults })
  try {
    return await run(faulty.url)
  } finally {
    await faulty.stop()
  }
}

function countFaultRun(tally: FaultTally, run: { ms: number; log: string }): void {
  tally.fault.push(run.ms)
  const retries = run.log.split('\n').flatMap((l) => /; retry (\d+) of \d+/.exec(l)?.[1] ?? [])
  tally.retries.push(retries.length)
  tally.most.push(Math.max(0, ...retries.map(Number)))
}

function summary(tally: FaultTally): FaultSummary {
  return {
    cleanMs: median(tally.clean),
    faultMs: median(tally.fault),
    ratio: median(tally.fault.map((f, i) => f / tally.clean[i]!)),
    mostRetries: median(tally.most),
  }
}
