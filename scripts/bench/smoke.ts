// What the smoke test costs: deploys of example-site/ through dist/index.js against the emulator at its
// defaults, with smoke-test on and off in turn (the order moving from pair to pair), each pair to a
// namespace of its own; the median of each and of the differences. `npm run bench -- --smoke N` runs it
// with the rest; `node scripts/bench/smoke.ts [N]` alone. Without a browser it says so and measures nothing.

import { cp, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { findBrowser } from '../../src/deploy/smoke/browser.ts'
import { startEmulator } from '../../src/emulator/index.ts'
import { actionDefaults, runAction } from '../run-action.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

export interface SmokeCost {
  browser: string
  pairs: number
  withoutMs: number
  withMs: number
  /** The median of the pairs' differences. */
  costMs: number
  /** What the smoke test said, of the last run with it. */
  line: string
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export async function measureSmoke(pairs: number): Promise<SmokeCost | { skipped: string }> {
  const browser = findBrowser({ env: process.env, platform: process.platform })
  if ('missing' in browser) return { skipped: browser.missing }
  const emulator = await startEmulator({ rateLimit: false })
  const site = await mkdtemp(path.join(os.tmpdir(), 'gamehost-bench-smoke-'))
  try {
    await cp(path.join(root, 'example-site'), site, { recursive: true })
    const defaults = await actionDefaults(path.join(root, 'action.yml'))
    const times = { with: [] as number[], without: [] as number[] }
    let line = ''
    for (let pair = 0; pair < pairs; pair++) {
      const order = pair % 2 ? (['with', 'without'] as const) : (['without', 'with'] as const)
      for (const kind of order) {
        const started = performance.now()
        const run = await runAction({
          entry: path.join(root, 'dist/index.js'),
          defaults,
          cwd: root,
          inputs: {
            'api-url': emulator.url,
            token: 'gamehost-demo-token',
            'game-id': '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
            path: site,
            namespace: `smoke-${pair}-${kind === 'with' ? 'on' : 'off'}`,
            comment: 'false',
            'smoke-test': String(kind === 'with'),
          },
        })
        times[kind].push(performance.now() - started)
        if (run.exitCode !== 0) throw new Error(`the deploy failed:\n${run.stdout}${run.stderr}`)
        if (kind === 'with') line = run.stdout.split('\n').find((l) => l.startsWith('Smoke test')) ?? ''
      }
    }
    return {
      browser: browser.path,
      pairs,
      withoutMs: median(times.without),
      withMs: median(times.with),
      costMs: median(times.with.map((ms, i) => ms - times.without[i]!)),
      line,
    }
  } finally {
    await rm(site, { recursive: true, force: true })
    await emulator.close()
  }
}

export function describeSmokeCost(cost: SmokeCost | { skipped: string }): string {
  if ('skipped' in cost) return `smoke test: not measured (${cost.skipped})`
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`
  return (
    `smoke test (example-site, ${cost.pairs} pairs, ${cost.browser}): deploy ${s(cost.withoutMs)} without, ` +
    `${s(cost.withMs)} with; it costs ${s(cost.costMs)} (median of the differences). ${cost.line}`
  )
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(describeSmokeCost(await measureSmoke(Number(process.argv[2] ?? 3))))
}
