// npm run bench: the deploy against the practical limits of this machine, measured in one run.
//
// For each site it starts the emulator in its own process with the real service's upload shape (one
// PUT per file, whatever its size), then runs, interleaved and repeated: the whole deploy through
// dist/index.js as the runner runs it (hashing included) and the honest reference, a bare uploader
// written with node:http (scripts/bench/bare-upload.ts), at the same concurrency; then our hashing
// phase alone and sha256sum. The mixed site is also run against a store that answers each PUT after
// --latency ms (a CI runner's round trip), the deploy at its default settings against the bare
// uploader at --distant-concurrency. It reports medians, paired ratios, the peak RSS of the deploying
// process and the start-up of dist/index.js, as a table and as JSON.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { actionDefaults, runAction } from '../run-action.ts'
import { buildSite, type SiteSpec } from './site.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const MiB = 1024 * 1024

const { values } = parseArgs({
  options: {
    sites: { type: 'string', default: 'mixed,big,small-1000,small-5000,small-20000' },
    repeats: { type: 'string', default: '5' },
    'scaling-repeats': { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '' },
    latency: { type: 'string', default: '80' },
    'distant-concurrency': { type: 'string', default: '128' },
    sweep: { type: 'string', default: '' },
    'sweep-latencies': { type: 'string', default: '20,80' },
    'small-files': { type: 'string', default: '3000' },
    'big-files': { type: 'string', default: '4' },
    'big-mib': { type: 'string', default: '40' },
    'single-mib': { type: 'string', default: '700' },
    baseline: { type: 'string', default: '' },
    out: { type: 'string', default: path.join(root, '.bench/results.json') },
    help: { type: 'boolean', default: false },
  },
})
if (values.help) {
  console.log(`npm run bench -- [options]
  --sites a,b,c            sites to measure (default mixed,big,small-1000,small-5000,small-20000)
                           mixed: --small-files files of 1-32 KiB + --big-files files of --big-mib MiB
                           big: one file of --single-mib MiB; small-N: N files of 1-32 KiB
  --repeats N              pairs of runs on mixed and big, median reported (default 5)
  --scaling-repeats N      the same for the small-N sites (default 3)
  --concurrency N          the deploy's concurrency input (default: the action's default)
  --latency MS             the mixed site again with each PUT answered after MS ms: the deploy at
                           its default settings against the bare uploader at --distant-concurrency
                           (default 80 and 128; 0 skips it)
  --sweep 16,32,64,128     time deploy and bare upload of the mixed site at these concurrencies, at
                           each of --sweep-latencies (default 20,80) ms per PUT, with peak RSS
  --baseline FILE          also run this other build of dist/index.js in each pair (A/B of a change)
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
const siteNames = values.sites.split(',').filter(Boolean)
for (const name of siteNames) {
  const small = /^small-(\d+)$/.exec(name)
  if (small) specs[name] = { smallFiles: Number(small[1]), bigFiles: 0, bigBytes: 0 }
  else if (!specs[name]) throw new Error(`unknown site ${name}`)
}

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
  sha256sumMs: number
  hashRatio: number
  peakRssMib: number
  bareRssMib: number
}
const rows: Row[] = []
interface Distant {
  latencyMs: number
  deployConcurrency: number
  bareConcurrency: number
  deployMs: number
  bareMs: number
  ratio: number
  peakRssMib: number
}
let distant: Distant | undefined
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
      const sums: number[] = []
      for (let i = 0; i < repeats; i++) {
        hashes.push(await hashPhase(dir))
        sums.push(
          await timeCommand('sh', ['-c', `find . -type f -print0 | xargs -0 sha256sum > /dev/null`], dir),
        )
      }
      if (name === 'mixed' && Number(values.latency) > 0) {
        const far = await startEmulatorProcess(Number(values.latency))
        try {
          console.log(
            `  each PUT answered after ${values.latency} ms: deploy at concurrency ${concurrency}, bare at ${values['distant-concurrency']}`,
          )
          const p = await pairedRuns(far.url, dir, concurrency, values['distant-concurrency'], repeats)
          distant = {
            latencyMs: Number(values.latency),
            deployConcurrency: Number(concurrency),
            bareConcurrency: Number(values['distant-concurrency']),
            ...p,
          }
        } finally {
          await far.stop()
        }
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
        sha256sumMs: median(sums),
        hashRatio: median(hashes) / median(sums),
        peakRssMib: pairs.peakRssMib,
        bareRssMib: pairs.bareRssMib,
      }
      rows.push(row)
    } finally {
      await emulator.stop()
      await rm(dir, { recursive: true, force: true })
    }
  }

  const table = renderTable(rows, startupMs, distant, sweep)
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
    targets: targets(rows, startupMs),
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
  const baselines: number[] = []
  const baselineRss: number[] = []
  for (let i = 0; i < repeats; i++) {
    const order = i % 2 === 0 ? ['deploy', 'bare'] : ['bare', 'deploy']
    if (values.baseline) order.splice(i % 3, 0, 'baseline')
    for (const which of order) {
      if (which === 'baseline') {
        const r = await timeDeploy(url, dir, deployConcurrency, values.baseline)
        baselines.push(r.ms)
        baselineRss.push(r.peakRss)
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
        (values.baseline
          ? `, baseline ${baselines.at(-1)!.toFixed(0)} ms (${mib(baselineRss.at(-1)!)})`
          : '') +
        '\n',
    )
  }
  if (values.baseline) {
    console.log(
      `  baseline: ${median(baselines).toFixed(0)} ms, baseline / bare ${median(baselines.map((b, i) => b / bares[i]!)).toFixed(2)}x, ` +
        `deploy / baseline ${median(deploys.map((d, i) => d / baselines[i]!)).toFixed(2)}x, peak RSS ${(Math.max(...baselineRss) / 1024).toFixed(0)} MiB`,
    )
  }
  return {
    deployMs: median(deploys),
    bareMs: median(bares),
    ratio: median(deploys.map((d, i) => d / bares[i]!)),
    peakRssMib: Math.max(...rss) / 1024,
    bareRssMib: Math.max(...bareRss) / 1024,
  }
}

async function timeDeploy(
  url: string,
  dir: string,
  c: string,
  entry = path.join(root, 'dist/index.js'),
): Promise<{ ms: number; peakRss: number }> {
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
    },
    onSpawn: sampler.watch,
  })
  const ms = performance.now() - t
  if (run.exitCode !== 0) throw new Error(`the deploy failed:\n${run.stdout}${run.stderr}`)
  return { ms, peakRss: sampler.stop() }
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
    [path.join(root, 'scripts/bench/bare-upload.ts'), ...args, '--concurrency', c],
    root,
    sampler.watch,
  )
  return { ms, peakRss: sampler.stop() }
}

/** The deploy's hashing phase over a site, as timed inside its own process. */
function hashPhase(dir: string): Promise<number> {
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
        resolve((JSON.parse(last) as { ms: number }).ms)
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
): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = performance.now()
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] })
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

/** Peak RSS (KiB) of a process: the kernel's high-water mark, sampled until the process ends. */
function rssSampler(): { watch: (pid: number) => void; stop: () => number } {
  let peak = 0
  let timer: NodeJS.Timeout | undefined
  return {
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
      return peak
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
): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(
    process.execPath,
    [path.join(root, 'scripts/bench/emulator.ts'), '--put-latency', String(putLatencyMs)],
    {
      cwd: root,
      env: { ...process.env, TMPDIR: storageTmp },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
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

function renderTable(rows: Row[], startupMs: number, far: Distant | undefined, swept: typeof sweep): string {
  const lines = [
    `Concurrency ${concurrency} for both (the action's default unless --concurrency); one PUT per file; deploy / bare is the median of paired runs.`,
    '',
    '| site | files | MiB | deploy | bare upload (node:http) | deploy / bare | hashing | sha256sum | hashing / sha256sum | peak RSS deploy | peak RSS bare |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.site} | ${r.files} | ${r.mib.toFixed(0)} | ${s(r.deployMs)} | ${s(r.bareMs)} | ${r.ratio.toFixed(2)}x | ${s(r.hashMs)} | ${s(r.sha256sumMs)} | ${r.hashRatio.toFixed(2)}x | ${r.peakRssMib.toFixed(0)} MiB | ${r.bareRssMib.toFixed(0)} MiB |`,
    ),
  ]
  if (far) {
    lines.push(
      '',
      `Mixed site, each PUT answered after ${far.latencyMs} ms:`,
      '',
      '| deploy (concurrency) | bare upload (concurrency) | deploy / bare | peak RSS deploy |',
      '| ---: | ---: | ---: | ---: |',
      `| ${s(far.deployMs)} (${far.deployConcurrency}) | ${s(far.bareMs)} (${far.bareConcurrency}) | ${far.ratio.toFixed(2)}x | ${far.peakRssMib.toFixed(0)} MiB |`,
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
  lines.push('', `Start-up of dist/index.js to its first line: ${startupMs.toFixed(0)} ms.`)
  lines.push('', '| target | measured | met |', '| --- | ---: | :---: |')
  for (const t of targets(rows, startupMs))
    lines.push(`| ${t.target} | ${t.measured} | ${t.met ? 'yes' : 'NO'} |`)
  return lines.join('\n')
}

interface Target {
  target: string
  measured: string
  met: boolean
}

/** The bounds the project holds itself to, for the sites this run measured. */
function targets(rows: Row[], startupMs: number): Target[] {
  const site = (name: string) => rows.find((r) => r.site === name)
  const found: Target[] = []
  const mixed = site('mixed')
  if (mixed)
    found.push({
      target: 'mixed site: deploy <= 1.10x the bare uploader',
      measured: `${mixed.ratio.toFixed(2)}x`,
      met: mixed.ratio <= 1.1,
    })
  const many = site('small-20000')
  if (many) {
    found.push({
      target: '20,000 small files: peak RSS <= 200 MiB',
      measured: `${many.peakRssMib.toFixed(0)} MiB`,
      met: many.peakRssMib <= 200,
    })
    const share = many.peakRssMib / many.bareRssMib
    found.push({
      target: "20,000 small files: peak RSS <= 0.65x the bare uploader's",
      measured: `${share.toFixed(2)}x`,
      met: share <= 0.65,
    })
  }
  const big = site('big')
  if (big)
    found.push({
      target: `one ${big.mib.toFixed(0)} MiB file: peak RSS <= 160 MiB`,
      measured: `${big.peakRssMib.toFixed(0)} MiB`,
      met: big.peakRssMib <= 160,
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
