// scripts/ci/emulator.ts, as ci.yml runs it between steps: `start` returns once the bundled CLI's
// emulator answers and leaves it running; `stop` ends it, frees its port and prints its log.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { emulatorFiles, startEmulator } from '../../scripts/ci/emulator.ts'
import { root } from '../support/actions.ts'

const run = (...args: string[]) =>
  promisify(execFile)(process.execPath, [path.join(root, 'scripts/ci/emulator.ts'), ...args], { cwd: root })

async function status(url: string): Promise<number | string> {
  try {
    return (await fetch(url)).status
  } catch (error) {
    return ((error as Error).cause as NodeJS.ErrnoException | undefined)?.code ?? String(error)
  }
}

/**
 * A free port below the ephemeral range: a test file beside this one that listens on port 0 is never
 * given it between the moment it is found free and the moment the emulator listens on it.
 */
async function quietPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    const server = createServer()
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false))
      server.listen(port, '127.0.0.1', () => resolve(true))
    })
    if (free) {
      await new Promise((resolve) => server.close(resolve))
      return port
    }
  }
}

test('start leaves the emulator answering after the script exits; stop ends it and prints its log', async () => {
  const port = await quietPort()
  const url = `http://127.0.0.1:${port}`
  const started = await run('start', '--port', String(port))
  assert.match(started.stdout, new RegExp(`Emulator listening on ${url} \\(log: `))
  assert.equal(await status(`${url}/cloud/bootstrap`), 401, 'it answers, and asks for the token')
  await assert.rejects(run('start', '--port', String(port)), /already answers/)

  const stopped = await run('stop', '--port', String(port))
  assert.match(stopped.stdout, /gamehost emulator listening on/)
  assert.match(stopped.stdout, /GET \/cloud\/bootstrap 401/)
  assert.equal(await status(`${url}/cloud/bootstrap`), 'ECONNREFUSED')
  assert.equal(existsSync(emulatorFiles(port).pid), false)
})

test('start refuses a port something listens on, however slow it is to answer (a busy machine)', async () => {
  // Accepts connections and never answers: an emulator on a machine too busy to answer within 2 s
  // was taken for none, and a second one was started on its port.
  const sockets: Socket[] = []
  const server = createServer((socket) => void sockets.push(socket))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  try {
    await assert.rejects(startEmulator(port), /already answers: stop what listens on port \d+ first/)
  } finally {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => server.close(resolve))
  }
})

test('start fails when its emulator exits, though another server has come to answer on the port', async () => {
  // Another server takes the port between the check and the emulator's listen: its answers were
  // taken for the emulator's, and start returned with no emulator of its own running.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gamehost-ci-emulator-'))
  const pidFile = path.join(dir, 'other.pid')
  const entry = path.join(dir, 'not-an-emulator.js')
  const other = `require('node:http').createServer((q, s) => s.end('other')).listen(Number(process.argv[1]), '127.0.0.1', () => console.log('up'))`
  await writeFile(
    entry,
    `import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
const port = process.argv[process.argv.indexOf('--port') + 1]
const server = spawn(process.execPath, ['-e', ${JSON.stringify(other)}, port], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] })
server.stdout.once('data', () => {
  writeFileSync(${JSON.stringify(pidFile)}, String(server.pid))
  process.exit(1)
})
`,
  )
  const port = await quietPort()
  try {
    await assert.rejects(startEmulator(port, entry), /The emulator exited with code 1/)
  } finally {
    if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL')
  }
})
