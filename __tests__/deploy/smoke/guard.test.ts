// The smoke test's network guard: which addresses are the runner's own, how a name is judged (by all
// its addresses, the deployed origin excepted), and the SOCKS5 proxy refusing before any connection.
// The real browser's part is in __tests__/bundles/smoke-isolation.test.ts.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, connect, type AddressInfo, type Socket } from 'node:net'
import { describe, test } from 'node:test'
import { destinationOf, internalRange, judgeDestination } from '../../../src/deploy/smoke/addresses.ts'
import { startGuard } from '../../../src/deploy/smoke/guard.ts'
import { runnerProxy } from '../../../src/deploy/smoke/runner-proxy.ts'
import { createServer as httpServer, type IncomingMessage } from 'node:http'
import { createProxy } from 'proxy'

describe('internalRange', () => {
  test("the runner's ranges, in both families and IPv4 written as IPv6; anything else is not", () => {
    const cases: Record<string, string | undefined> = {
      '127.0.0.1': 'loopback',
      '127.8.9.10': 'loopback',
      '::1': 'loopback',
      '[::1]': 'loopback',
      '::ffff:127.0.0.1': 'loopback',
      '0.0.0.0': 'this host',
      '::': 'this host',
      '169.254.169.254': 'link-local',
      'fe80::1%eth0': 'link-local',
      '10.0.0.1': 'private',
      '172.16.0.1': 'private',
      '172.31.255.255': 'private',
      '192.168.1.1': 'private',
      'fc00::1': 'unique-local',
      'fd12:3456::1': 'unique-local',
      '172.32.0.1': undefined,
      '8.8.8.8': undefined,
      '2606:4700::1111': undefined,
      'example.com': undefined,
    }
    for (const [address, range] of Object.entries(cases)) assert.equal(internalRange(address), range, address)
  })
})

describe('judgeDestination', () => {
  const own = { host: 'demo-game--pr-1.localhost', port: 8787 }
  const dns: Record<string, string[]> = {
    'cdn.example': ['93.184.216.34'],
    'rebound.example': ['93.184.216.34', '127.0.0.1'],
    'metadata.internal': ['169.254.169.254'],
  }
  const judge = { own, resolve: async (host: string) => dns[host] ?? [] }

  test('its own origin (a host under localhost on 127.0.0.1): allowed, on that port only', async () => {
    assert.deepEqual(await judgeDestination('demo-game--pr-1.localhost', 8787, judge), {
      allowed: true,
      address: '127.0.0.1',
    })
    assert.deepEqual(await judgeDestination('demo-game--pr-1.localhost', 8788, judge), {
      allowed: false,
      range: 'loopback',
    })
    // The emulator's API: the same port under another name.
    assert.deepEqual(await judgeDestination('127.0.0.1', 8787, judge), { allowed: false, range: 'loopback' })
    assert.deepEqual(await judgeDestination('localhost', 8787, judge), { allowed: false, range: 'loopback' })
  })

  test('a name is judged by every address it resolves to, and connected to at the one judged', async () => {
    assert.deepEqual(await judgeDestination('cdn.example', 443, judge), {
      allowed: true,
      address: '93.184.216.34',
    })
    assert.deepEqual(await judgeDestination('rebound.example', 443, judge), {
      allowed: false,
      range: 'loopback',
    })
    assert.deepEqual(await judgeDestination('Metadata.Internal.', 80, judge), {
      allowed: false,
      range: 'link-local',
    })
    await assert.rejects(
      judgeDestination('nowhere.example', 80, judge),
      /nowhere\.example resolves to no address/,
    )
  })

  test("a URL's destination: its port or its scheme's", () => {
    assert.deepEqual(destinationOf(new URL('https://Game.Example/x')), { host: 'game.example', port: 443 })
    assert.deepEqual(destinationOf(new URL('ws://[::1]:9000/')), { host: '::1', port: 9000 })
    assert.deepEqual(destinationOf(new URL('http://a.localhost:8787/')), { host: 'a.localhost', port: 8787 })
  })
})

/** A SOCKS5 CONNECT through the proxy; returns the reply code, the open socket and all it received. */
async function socksConnect(
  proxy: string,
  host: string,
  port: number,
): Promise<{ reply: number; socket: Socket; received: Buffer[] }> {
  const socket = connect(Number(new URL(proxy).port), '127.0.0.1')
  await once(socket, 'connect')
  const replies: Buffer[] = []
  socket.on('data', (chunk: Buffer) => replies.push(chunk))
  const name = Buffer.from(host)
  const request = Buffer.alloc(2)
  request.writeUInt16BE(port)
  socket.write(Buffer.concat([Buffer.from([5, 1, 0]), Buffer.from([5, 1, 0, 3, name.length]), name, request]))
  while (Buffer.concat(replies).length < 12) await once(socket, 'data')
  return { reply: Buffer.concat(replies)[3]!, socket, received: replies }
}

describe('the guard proxy', () => {
  test("refuses the runner's addresses before connecting; carries its own origin's bytes both ways", async () => {
    const connections: string[] = []
    const service = createServer((socket) => {
      connections.push('connected')
      socket.end('hello from the origin')
    })
    service.listen(0, '127.0.0.1')
    await once(service, 'listening')
    const port = (service.address() as AddressInfo).port
    const guard = await startGuard({ own: { host: 'game.localhost', port } })
    try {
      const refused = await socksConnect(guard.proxy, '127.0.0.1', port)
      assert.equal(refused.reply, 2, 'not allowed by the ruleset')
      refused.socket.destroy()
      const metadata = await socksConnect(guard.proxy, '169.254.169.254', 80)
      assert.equal(metadata.reply, 2)
      metadata.socket.destroy()
      const again = await socksConnect(guard.proxy, '169.254.169.254', 80)
      assert.equal(again.reply, 2)
      again.socket.destroy()
      assert.deepEqual(connections, [])
      assert.equal(guard.refused, 3, 'each refusal counted')
      assert.equal(guard.destinations(), 2)
      assert.deepEqual(guard.named, [
        { destination: `127.0.0.1:${port}`, range: 'loopback' },
        { destination: '169.254.169.254:80', range: 'link-local' },
      ])
      assert.ok(guard.wasRefused('127.0.0.1', port))
      assert.ok(!guard.wasRefused('game.localhost', port))

      const own = await socksConnect(guard.proxy, 'game.localhost', port)
      assert.equal(own.reply, 0)
      await once(own.socket, 'end')
      // After the greeting's answer (2 bytes) and the CONNECT's (10).
      assert.equal(Buffer.concat(own.received).subarray(12).toString(), 'hello from the origin')
      assert.deepEqual(connections, ['connected'])
    } finally {
      await guard.close()
      service.close()
    }
  })
})

describe("the runner's proxy", () => {
  test('HTTPS_PROXY or HTTP_PROXY, lower case first; NO_PROXY by name, subdomain, port or *', () => {
    const env = { https_proxy: 'http://lower:3128', HTTPS_PROXY: 'http://upper:3128', NO_PROXY: '' }
    assert.equal(runnerProxy('cdn.example', 443, env)?.host, 'lower:3128')
    assert.equal(runnerProxy('cdn.example', 443, { HTTP_PROXY: 'http://plain:8080' })?.host, 'plain:8080')
    assert.equal(runnerProxy('cdn.example', 443, {}), undefined)
    assert.equal(runnerProxy('cdn.example', 443, { HTTP_PROXY: 'socks5://x:1' }), undefined)
    const no = (noProxy: string, host: string, port = 443) =>
      runnerProxy(host, port, { HTTPS_PROXY: 'http://p:1', NO_PROXY: noProxy }) === undefined
    assert.ok(no('*', 'cdn.example'))
    assert.ok(no('example', 'cdn.example'))
    assert.ok(no('.example', 'cdn.example'))
    assert.ok(no('*.example', 'cdn.example'))
    assert.ok(no('a.test, cdn.example:443', 'cdn.example'))
    assert.ok(!no('cdn.example:8443', 'cdn.example'))
    assert.ok(!no('xample', 'cdn.example'))
  })

  test('behind it, an allowed connection goes through it (HTTP CONNECT), its bytes both ways; the refused never reach it', async () => {
    const service = createServer((socket) => socket.end('hello through the proxy'))
    service.listen(0, '127.0.0.1')
    await once(service, 'listening')
    const port = (service.address() as AddressInfo).port
    const tunnels: string[] = []
    const proxy = httpServer()
    proxy.on('connect', (req: IncomingMessage) => tunnels.push(req.url ?? ''))
    createProxy(proxy)
    proxy.listen(0, '127.0.0.1')
    await once(proxy, 'listening')
    const saved = process.env.HTTPS_PROXY
    process.env.HTTPS_PROXY = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
    const guard = await startGuard({ own: { host: 'game.localhost', port } })
    try {
      const refused = await socksConnect(guard.proxy, '10.0.0.1', 80)
      assert.equal(refused.reply, 2)
      refused.socket.destroy()
      const own = await socksConnect(guard.proxy, 'game.localhost', port)
      assert.equal(own.reply, 0)
      await once(own.socket, 'end')
      assert.equal(Buffer.concat(own.received).subarray(12).toString(), 'hello through the proxy')
      // The address judged, not the name: no second lookup, by the proxy or anyone, can answer otherwise.
      assert.deepEqual(tunnels, [`127.0.0.1:${port}`])
    } finally {
      if (saved === undefined) delete process.env.HTTPS_PROXY
      else process.env.HTTPS_PROXY = saved
      await guard.close()
      proxy.closeAllConnections()
      proxy.close()
      service.close()
    }
  })
})
