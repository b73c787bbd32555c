// The processes the bench times, each on its own: the deploy through dist/index.js as the runner
// runs it, the bare uploader, the hashing phase, the emulator, and their peak RSS.
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { runAction } from '../run-action.ts'
import { defaults, root, storageTmp, work } from './options.ts'

export interface Timed {
  ms: number
  /** KiB. */
  peakRss: number
}

const SITE_INPUTS = {
  token: 'gamehost-demo-token',
  'game-id': '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** The whole deploy, through `entry` (this build's dist/index.js unless a baseline's), as the runner runs it. */
export async function timeDeploy(
  url: string,
  dir: string,
  c: string,
  entry = path.join(root, 'dist/index.js'),
  inputs: Record<string, string> = {},
): Promise<Timed & { log: string }> {
  const sampler = rssSampler()
  const t = performance.now()
  const run = await runAction({
    entry,
    defaults,
    cwd: root,
    inputs: { 'api-url': url, ...SITE_INPUTS, path: dir, concurrency: c, ...inputs },
    nodeArgs: sampler.nodeArgs,
    env: sampler.env,
    onSpawn: sampler.watch,
  })
  const ms = performance.now() - t
  if (run.exitCode !== 0) throw new Error(`the deploy failed:\n${run.stdout}${run.stderr}`)
  return { ms, peakRss: await sampler.stop(), log: run.stdout }
}

/** The reference: scripts/bench/bare-upload.ts on the same files, at concurrency `c`. */
export async function timeBare(url: string, dir: string, c: string): Promise<Timed> {
  const sampler = rssSampler()
  const args = ['--api-url', url, '--token', SITE_INPUTS.token, '--game-id', SITE_INPUTS['game-id']]
  const ms = await timeCommand(
    process.execPath,
    [
      ...sampler.nodeArgs,
      path.join(root, 'scripts/bench/bare-upload.ts'),
      ...args,
      '--path',
      dir,
      '--concurrency',
      c,
    ],
    root,
    sampler.watch,
    sampler.env,
  )
  return { ms, peakRss: await sampler.stop() }
}

/** The deploy's hashing phase over a site, as timed inside its own process. */
export function hashPhase(dir: string): Promise<{ ms: number; scanMs: number }> {
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

export function timeCommand(
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

/** The start-up of dist/index.js to its first line, median of 11. */
export async function measureStartup(): Promise<number> {
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

/** The emulator in a process of its own (scripts/bench/emulator.ts). */
export async function startEmulatorProcess(
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
