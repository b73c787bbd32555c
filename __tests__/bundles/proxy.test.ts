// Deploys through dist/index.js behind a real forwarding proxy (the `proxy` package) on 127.0.0.1:
// every API call and every PUT to the object store goes through it, and NO_PROXY bypasses it.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createProxy } from 'proxy'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { siteFiles, tempDir, writeTree } from '../support/helpers.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'

interface Proxied {
  method: string
  url: string
  status: number
}

async function startProxy(): Promise<{ url: string; seen: Proxied[]; close(): Promise<void> }> {
  const seen: Proxied[] = []
  const server = http.createServer()
  // Registered before the proxy's own listener: records every request it is asked to forward.
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    res.on('finish', () =>
      seen.push({ method: req.method ?? '', url: req.url ?? '', status: res.statusCode }),
    )
  })
  server.on('connect', (req: http.IncomingMessage) =>
    seen.push({ method: 'CONNECT', url: req.url ?? '', status: 0 }),
  )
  createProxy(server)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

describe('behind a forwarding proxy', () => {
  let emulator: Emulator
  let proxy: Awaited<ReturnType<typeof startProxy>>
  let site: string
  let defaults: Record<string, string>
  before(async () => {
    emulator = await startTestEmulator({ multipartThreshold: 64 * 1024, partSize: 64 * 1024 })
    proxy = await startProxy()
    site = await tempDir()
    await writeTree(site, siteFiles(12, { name: 'level.data', size: 200 * 1024 }))
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(async () => {
    await emulator.close()
    await proxy.close()
  })

  const deploy = (env: Record<string, string>, namespace: string) =>
    runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      env,
      inputs: {
        'api-url': emulator.url,
        token: 'gamehost-demo-token',
        'game-id': GAME,
        path: site,
        namespace,
        'version-id': '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
        domain: `${namespace}.preview.example.com`,
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
      },
    })

  test('HTTP_PROXY: every API call and every PUT of the upload goes through the proxy', async () => {
    const emulatorBefore = emulator.requests.length
    const run = await deploy({ HTTP_PROXY: proxy.url }, 'behind-proxy')
    assert.equal(run.exitCode, 0, run.stdout + run.stderr)

    const direct = emulator.requests.slice(emulatorBefore).map((r) => `${r.method} ${r.path}`)
    const proxied = proxy.seen.map((r) => `${r.method} ${new URL(r.url).pathname}`)
    assert.equal(
      proxy.seen.filter((r) => r.method === 'CONNECT').length,
      0,
      'plain http is forwarded, not tunnelled',
    )
    // Each request the emulator answered was forwarded by the proxy (a request may appear only once).
    const left = [...proxied]
    for (const request of direct) {
      const at = left.indexOf(request)
      assert.notEqual(at, -1, `${request} did not go through the proxy`)
      left.splice(at, 1)
    }
    assert.ok(
      proxied.some((r) => r.startsWith('POST /cloud/games/')),
      'API calls proxied',
    )
    // The upload's PUTs (the API's one, publishing the version to the new namespace, apart).
    const puts = proxy.seen.filter(
      (r) => r.method === 'PUT' && !new URL(r.url).pathname.startsWith('/cloud/'),
    )
    assert.ok(
      proxied.some((r) => /^PUT \/cloud\/games\/.*\/version$/.test(r)),
      'the publish proxied',
    )
    // 12 small files in one PUT each, level.data in four 64 KiB parts (200 KiB), and the record of the
    // build (site-record).
    assert.equal(puts.length, 12 + 4 + 1)
    assert.ok(puts.every((r) => r.status === 200))
    assert.ok(emulator.site(run.outputs['site-id']!))
  })

  test('NO_PROXY (lower-case names too) sends every request direct', async () => {
    const proxiedBefore = proxy.seen.length
    const emulatorBefore = emulator.requests.length
    const run = await deploy({ http_proxy: proxy.url, no_proxy: 'example.com,127.0.0.1' }, 'no-proxy')
    assert.equal(run.exitCode, 0, run.stdout + run.stderr)
    assert.ok(emulator.requests.length - emulatorBefore > 15)
    assert.equal(proxy.seen.length, proxiedBefore, 'nothing went through the proxy')
  })
})
