// What a build's code can reach from the smoke test's browser (src/deploy/smoke/, run from source in
// the machine's Chrome or Chromium): not the run's environment (the page asks the test to read every
// browser process's /proc/<pid>/environ while it is open). Without a browser, every test here is skipped.
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
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
async function serve(routes: Record<string, Handler>): Promise<{ origin: string; close: () => void }> {
  const server = createServer((req, res) => {
    const handler = routes[new URL(req.url ?? '/', 'http://x').pathname]
    if (!handler) return void res.writeHead(404).end()
    void Promise.resolve(handler(req, res)).catch((error: unknown) => res.writeHead(500).end(String(error)))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { origin: `http://127.0.0.1:${port}`, close: () => server.close() }
}

const html = (body: string) => (_req: IncomingMessage, res: ServerResponse) =>
  void res.writeHead(200, { 'content-type': 'text/html' }).end(`<!DOCTYPE html><title>t</title>${body}`)

async function watch(url: string): Promise<Seen> {
  return watchPage({
    browserPath: (browser as { path: string }).path,
    url,
    watchMs: 300,
    loadTimeoutMs: 30_000,
    screenshotFile: path.join(await tempDir(), 'shot.png'),
    signal: new AbortController().signal,
    now: () => performance.now(),
  })
}

describe('the smoke test browser: what the page can reach', { skip: noBrowser }, () => {
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
})
