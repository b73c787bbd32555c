// scripts/ci/emulator.ts, as ci.yml runs it between steps: `start` returns once the bundled CLI's
// emulator answers and leaves it running; `stop` ends it, frees its port and prints its log.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { emulatorFiles, startEmulator } from '../../scripts/ci/emulator.ts'
import { root } from '../support/actions.ts'
import { deadPort } from '../support/helpers.ts'

const run = (...args: string[]) =>
  promisify(execFile)(process.execPath, [path.join(root, 'scripts/ci/emulator.ts'), ...args], { cwd: root })

async function status(url: string): Promise<number | string> {
  try {
    return (await fetch(url)).status
  } catch (error) {
    return ((error as Error).cause as NodeJS.ErrnoException | undefined)?.code ?? String(error)
  }
}

test('start leaves the emulator answering after the script exits; stop ends it and prints its log', async () => {
  const port = await deadPort()
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
