// The CLI's bundle (dist/cli/index.js) run as a user runs it: a child process with a clean environment.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
export const CLI = path.join(root, 'dist/cli/index.js')
/** The CLI must also run on users' Node 20: GAMEHOST_CLI_NODE=/path/to/node20 runs the tests on it. */
export const NODE = process.env.GAMEHOST_CLI_NODE || process.execPath

export interface Gamehost {
  /** The Node that runs it. */
  node: string
  /** Its entry point: dist/cli/index.js, or the installed package's. */
  cli: string
}

export interface CliRun {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `gamehost` with a clean environment (PATH and HOME, plus `env`), in `cwd`; resolves once it ended. */
export async function runGamehost(
  gamehost: Gamehost,
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
): Promise<CliRun> {
  const child = spawn(gamehost.node, [gamehost.cli, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const [code] = (await once(child, 'close')) as [number | null]
  return { code, stdout, stderr }
}

/** The committed bundle, run by this Node (or GAMEHOST_CLI_NODE), in `cwd` (default this one). */
export function runCli(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<CliRun> {
  return runGamehost({ node: NODE, cli: CLI }, args, env, cwd)
}
