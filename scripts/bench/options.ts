// The bench's options (`npm run bench -- --help`) and what follows from them: the sites and their
// shapes, the builds in each pair, the folder the sites are built in.
import { existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { actionDefaults } from '../run-action.ts'
import type { SiteSpec } from './site.ts'

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
export const MiB = 1024 * 1024
/** The README's flaky deploy (docs/emulator.md): 20% 503s, 5% resets, two stalls, 10% API 503s. */
const README_FAULTS = '{"putErrorRate":0.2,"putResetRate":0.05,"putStallCount":2,"apiErrorRate":0.1}'

const HELP = `npm run bench -- [options]
  --sites a,b,c            sites to measure (default mixed,big,small-1000,small-5000,small-20000,faults)
                           mixed: --small-files files of 1-32 KiB + --big-files files of --big-mib MiB
                           big: one file of --single-mib MiB; small-N: N files of 1-32 KiB
                           faults: the fault runs below (no bare upload, no hashing); '' for none
  --repeats N              pairs of runs on mixed, big, the distant sites and faults, median
                           reported (default 5)
  --scaling-repeats N      the same for the small-N sites and the layouts (default 3)
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
  --out FILE               where the JSON goes (default .bench/results.json)`

export const { values } = parseArgs({
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
  console.log(HELP)
  process.exit(0)
}

const list = (text: string) => text.split(',').filter(Boolean)

export const defaults = await actionDefaults(path.join(root, 'action.yml'))
export const concurrency = values.concurrency || defaults.concurrency || '8'
export const baselines = list(values.baseline)
export const repeatsOf = (site: string) =>
  Number(site.startsWith('small-') ? values['scaling-repeats'] : values.repeats)

/** Small files a folder in each layout: 0 is all of them in one folder. */
export const FILES_A_FOLDER: Record<string, number> = { small: 100, flat: 0, folders: 1 }
export const siteNames = list(values.sites).filter((name) => name !== 'faults')
export const runFaults = list(values.sites).includes('faults')
export const latencies = values.latency
  .split(',')
  .map(Number)
  .filter((ms) => ms > 0)
export const distantSites = latencies.length ? list(values['distant-sites']) : []
export const discardSites = list(values['discard-sites'])
export const layouts = list(values.layouts)
export const layoutFiles = list(values['layout-files']).map(Number)
for (const layout of layouts) {
  if (FILES_A_FOLDER[layout] === undefined) throw new Error(`unknown layout ${layout}`)
}

export const specs: Record<string, SiteSpec> = {
  mixed: {
    smallFiles: Number(values['small-files']),
    bigFiles: Number(values['big-files']),
    bigBytes: Number(values['big-mib']) * MiB,
  },
  big: { smallFiles: 0, bigFiles: 1, bigBytes: Number(values['single-mib']) * MiB },
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
export const faultSite: SiteSpec = {
  smallFiles: Number(values['fault-files']),
  bigFiles: 1,
  bigBytes: Number(values['big-mib']) * MiB,
}

/** Where the sites are built, removed at the end. */
export const work = path.join(os.tmpdir(), `gamehost-bench-${process.pid}`)
// The emulator keeps what it receives: in memory (tmpfs) when there is one, so that the disk under
// it does not become what is measured.
export const storageTmp = existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir()
