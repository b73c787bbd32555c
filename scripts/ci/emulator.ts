// node scripts/ci/emulator.ts start [--port 8787]   starts the emulator in the background, returns once it listens
// node scripts/ci/emulator.ts stop [--port 8787]    stops it and prints its log
// The emulator of the bundled CLI (`node dist/cli/index.js emulator`, as `gamehost emulator`), left
// running between the steps of a CI job on every runner (a shell's `&` is not portable to Windows).
// Its pid and log are in the temporary folder, named by port.
import { spawn } from 'node:child_process'
import { connect } from 'node:net'
import { open, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

const READY_TIMEOUT_MS = 30_000

export function emulatorFiles(port: number): { pid: string; log: string } {
  const base = path.join(process.env.RUNNER_TEMP ?? os.tmpdir(), `gamehost-emulator-${port}`)
  return { pid: `${base}.pid`, log: `${base}.log` }
}

/** True when something accepts connections on the port, however slow it is to answer them. */
function listens(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    const end = (listening: boolean) => {
      socket.destroy()
      resolve(listening)
    }
    socket.once('connect', () => end(true))
    socket.once('error', () => end(false))
  })
}

export async function startEmulator(
  port: number,
  entry = path.join(root, 'dist/cli/index.js'),
): Promise<string> {
  const files = emulatorFiles(port)
  const url = `http://127.0.0.1:${port}`
  if (await listens(port)) throw new Error(`${url} already answers: stop what listens on port ${port} first`)
  const log = await open(files.log, 'w')
  const child = spawn(process.execPath, [entry, 'emulator', '--port', String(port)], {
    detached: true,
    stdio: ['ignore', log.fd, log.fd],
    windowsHide: true,
  })
  await log.close()
  let exited: number | null | undefined
  child.once('exit', (code) => (exited = code))
  await writeFile(files.pid, String(child.pid))
  const deadline = Date.now() + READY_TIMEOUT_MS
  // Its own line, not an answer on the port: another server that took the port meanwhile answers too.
  const listening = async () => (await readFile(files.log, 'utf8')).includes(`listening on ${url}`)
  while (!(await listening())) {
    if (exited !== undefined || Date.now() > deadline) {
      const why =
        exited !== undefined ? `exited with code ${exited}` : `did not answer in ${READY_TIMEOUT_MS / 1000} s`
      child.kill()
      throw new Error(`The emulator ${why}. Its log:\n${await readFile(files.log, 'utf8')}`)
    }
    await sleep(200)
  }
  child.unref()
  return url
}

/** Sends a signal (0: none, to ask whether the process lives); false when there is no such process. */
function signal(pid: number, name: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, name)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false
    throw error
  }
}

/** Stops the emulator started on the port, waits until it has exited, and returns its log. */
export async function stopEmulator(port: number): Promise<string> {
  const files = emulatorFiles(port)
  const pid = Number(await readFile(files.pid, 'utf8'))
  signal(pid, 'SIGTERM')
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (signal(pid, 0)) {
    if (Date.now() > deadline) signal(pid, 'SIGKILL')
    await sleep(100)
  }
  await rm(files.pid, { force: true })
  return readFile(files.log, 'utf8').catch(() => '')
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { port: { type: 'string', default: '8787' } },
  })
  const port = Number(values.port)
  if (positionals[0] === 'start') {
    console.log(`Emulator listening on ${await startEmulator(port)} (log: ${emulatorFiles(port).log})`)
  } else if (positionals[0] === 'stop') {
    process.stdout.write(await stopEmulator(port))
  } else {
    console.error('usage: node scripts/ci/emulator.ts start|stop [--port 8787]')
    process.exit(2)
  }
}

if (import.meta.main) await main()
