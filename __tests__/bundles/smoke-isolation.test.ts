// What a build's code can reach from the smoke test's browser (src/deploy/smoke/, run from source in
// the machine's Chrome or Chromium): not the run's environment (the page asks the test to read every
// browser process's /proc/<pid>/environ while it is open), and not the runner's network (loopback,
// private and link-local addresses, refused before any connection), only its own deployed origin.
// Chrome's sandbox is on unless the OS forbids it. Without a browser, every test here is skipped.
import assert from 'node:assert/strict'
import { lstat, readFile, symlink, writeFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createNetServer, type AddressInfo } from 'node:net'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { runSecrets } from '../../src/common/secrets.ts'
import { findBrowser } from '../../src/deploy/smoke/browser.ts'
import { watchPage, type Seen } from '../../src/deploy/smoke/watch.ts'
import { tempDir } from '../support/helpers.ts'
import { descendants, type ProcessSeen } from '../support/processes.ts'

const browser = findBrowser({ env: process.env, platform: process.platform })
const noBrowser = 'missing' in browser ? browser.missing : undefined

type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>

/** A server on 127.0.0.1 answering each path with its handler (404 otherwise); returns its origin. */
async function serve(
  routes: Record<string, Handler>,
): Promise<{ origin: string; routes: Record<string, Handler>; close: () => void }> {
  const server = createServer((req, res) => {
    const handler = routes[new URL(req.url ?? '/', 'http://x').pathname]
    if (!handler) return void res.writeHead(404).end()
    void Promise.resolve(handler(req, res)).catch((error: unknown) => res.writeHead(500).end(String(error)))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { origin: `http://127.0.0.1:${port}`, routes, close: () => server.close() }
}

const html = (body: string) => (_req: IncomingMessage, res: ServerResponse) =>
  void res.writeHead(200, { 'content-type': 'text/html' }).end(`<!DOCTYPE html><title>t</title>${body}`)

async function watch(url: string, screenshotFile?: string): Promise<Seen> {
  return watchPage({
    browserPath: (browser as { path: string }).path,
    url,
    watchMs: 300,
    loadTimeoutMs: 30_000,
    screenshotFile: screenshotFile ?? path.join(await tempDir(), 'shot.png'),
    signal: new AbortController().signal,
    now: () => performance.now(),
  })
}

describe('the smoke test browser: what the page can reach', { skip: noBrowser }, () => {
  test("Chrome's sandbox: on, unless the OS does not let Chrome start it (as root: off, and why); the screenshot a file of its own", async () => {
    const site = await serve({ '/': html('<canvas></canvas>') })
    try {
      // A link left at the screenshot's name is replaced, never written through.
      const dir = await tempDir()
      const elsewhere = path.join(dir, 'elsewhere.txt')
      await writeFile(elsewhere, 'kept')
      const shot = path.join(dir, 'gamehost-screenshot-1.png')
      await symlink(elsewhere, shot)
      const seen = await watch(`${site.origin}/`, shot)
      assert.equal(seen.screenshot, shot)
      assert.equal(await readFile(elsewhere, 'utf8'), 'kept')
      assert.ok((await lstat(shot)).isFile())
      assert.equal((await readFile(shot)).subarray(1, 4).toString(), 'PNG')
      if (process.platform === 'linux' && process.geteuid?.() === 0)
        assert.deepEqual(seen.sandbox, {
          on: false,
          why: 'the runner runs as root, and Chrome refuses its sandbox to root',
        })
      else assert.ok(seen.sandbox?.on || seen.sandbox?.why, 'on, or off and why')
    } finally {
      site.close()
    }
  })

  describe("the run's environment", { skip: process.platform !== 'linux' && '/proc is Linux' }, () => {
    const token = 'ghp_smoke-token-0123456789abcdef'
    const planted: Record<string, string> = {
      INPUT_TOKEN: token,
      'INPUT_GITHUB-TOKEN': 'ghs_another-token-9876543210',
      'INPUT_BASIC-AUTH': 'reviewer:smoke-preview-s3cret',
      GITHUB_TOKEN: 'ghs_the-runner-token-5555',
      ACTIONS_RUNTIME_TOKEN: 'actions-runtime-7777',
      // A variable Chrome is given by name, whose value holds a secret: dropped too.
      LC_PAPER: `en_US.${token}`,
    }
    const saved: Record<string, string | undefined> = {}
    before(() => {
      for (const [name, value] of Object.entries(planted)) {
        saved[name] = process.env[name]
        process.env[name] = value
      }
      runSecrets.add(token)
    })
    after(() => {
      for (const [name, value] of Object.entries(saved))
        if (value === undefined) delete process.env[name]
        else process.env[name] = value
    })

    test("no browser process holds an input, a token or a secret's value", async () => {
      let procs: ProcessSeen[] | undefined
      const site = await serve({
        '/': html(`<script>fetch('/opened')</script>`),
        // Read while the page is open: the page asks for it once its script runs.
        '/opened': async (_req, res) => {
          procs = await descendants()
          res.writeHead(204).end()
        },
      })
      try {
        await watch(`${site.origin}/`)
      } finally {
        site.close()
      }
      assert.ok(procs, 'the page ran')
      assert.ok(
        procs.some((p) => p.command.includes('--type=renderer')),
        `a renderer among ${procs.map((p) => p.command.split(' ')[0]).join(', ')}`,
      )
      for (const p of procs) {
        const names = p.environ.map((line) => line.slice(0, line.indexOf('=')))
        const leaked = names.filter((name) => /^(INPUT_|ACTIONS_|GITHUB_TOKEN$)/.test(name))
        assert.deepEqual(leaked, [], `process ${p.pid} (${p.command.slice(0, 80)})`)
        for (const value of Object.values(planted))
          assert.ok(!p.environ.join('\n').includes(value), `process ${p.pid} holds ${value}`)
      }
      assert.ok(
        procs.some((p) => p.environ.some((line) => line.startsWith('PATH='))),
        'PATH kept',
      )
    })
  })

  test("the page reaches its own origin and nothing of the runner's: refused before any connection, and counted", async () => {
    // Another service of the runner: it must see no connection at all.
    const connections: string[] = []
    const other = createNetServer((socket) => {
      connections.push(String(socket.remotePort))
      socket.destroy()
    })
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
    const otherPort = (other.address() as AddressInfo).port
    let results: Record<string, string> | undefined
    const site = await serve({})
    const ownPort = Number(new URL(site.origin).port)
    const targets = [
      `http://127.0.0.1:${otherPort}/secret`,
      `http://localhost:${otherPort}/secret`,
      `http://10.0.0.1/`,
      `http://169.254.169.254/latest/meta-data/`,
      `http://[::1]:${otherPort}/`,
      // The deployed host's port under another name (the emulator's API beside its CDN).
      `http://127.0.0.1:${ownPort}/own.json`,
    ]
    const page = `<script>
      const targets = ${JSON.stringify(targets)}
      const tried = (url) => fetch(url).then(() => 'answered', () => 'failed')
      const socket = new Promise((resolve) => {
        const ws = new WebSocket('ws://127.0.0.1:${otherPort}/')
        ws.onopen = () => resolve('answered')
        ws.onerror = () => resolve('failed')
      })
      const worker = new Promise((resolve) => {
        const w = new Worker('worker.js')
        w.onmessage = (event) => resolve(event.data)
      })
      Promise.all([fetch('own.json').then((a) => a.json()).then((j) => j.own), ...targets.map(tried), socket, worker])
        .then((all) => fetch('done', { method: 'POST', body: JSON.stringify(all) }))
    </script>`
    const worker = `fetch('http://127.0.0.1:${otherPort}/from-worker').then(() => postMessage('answered'), () => postMessage('failed'))`
    Object.assign(site.routes, {
      '/': html(page),
      '/own.json': (_req: IncomingMessage, res: ServerResponse) =>
        void res.writeHead(200, { 'content-type': 'application/json' }).end('{"own":"loaded"}'),
      '/worker.js': (_req: IncomingMessage, res: ServerResponse) =>
        void res.writeHead(200, { 'content-type': 'text/javascript' }).end(worker),
      '/done': async (req: IncomingMessage, res: ServerResponse) => {
        const all = JSON.parse(Buffer.concat(await req.toArray()).toString()) as string[]
        results = Object.fromEntries(
          ['own', ...targets, 'websocket', 'worker'].map((name, i) => [name, all[i]!]),
        )
        res.writeHead(204).end()
      },
    })
    let seen: Seen
    try {
      // The emulator's CDN names: a host under localhost, on 127.0.0.1.
      seen = await watch(`http://smoke-game.localhost:${ownPort}/`)
    } finally {
      site.close()
      other.close()
    }
    assert.deepEqual(results, {
      own: 'loaded',
      ...Object.fromEntries(targets.map((url) => [url, 'failed'])),
      websocket: 'failed',
      worker: 'failed',
    })
    assert.deepEqual(connections, [], 'the other service saw no connection')
    const named = new Set(seen.refused!.named.map((r) => `${r.destination} ${r.range}`))
    for (const refusal of [
      `127.0.0.1:${otherPort} loopback`,
      `localhost:${otherPort} loopback`,
      '10.0.0.1:80 private',
      '169.254.169.254:80 link-local',
    ])
      assert.ok(named.has(refusal), `${refusal} among ${[...named].join(', ')}`)
    assert.ok(seen.refused!.count >= targets.length + 2, `${seen.refused!.count} refused`)
    assert.equal(seen.problems.count('request'), 0, 'a refused connection is said once, as refused')
    assert.ok(seen.answered >= 4, 'the page, its JSON, its worker and its report answered')
  })
})
