// The only way out of the smoke test's browser: a SOCKS5 proxy on 127.0.0.1 that every connection goes
// through (workers', WebSockets; the host name sent, never resolved by the browser), which refuses
// those to the runner's own network (addresses.ts) before any connection is made.

import { once } from 'node:events'
import { createServer, connect, type Server, type Socket } from 'node:net'
import { judgeDestination, type Judge } from './addresses.ts'
import { runnerProxy, tunnel } from './runner-proxy.ts'

export interface Refusal {
  /** "127.0.0.1:8787", "metadata.internal:80". */
  destination: string
  /** "loopback", "private", "link-local"… */
  range: string
}

/** The refusals named; the rest only counted. */
const NAMED = 5

export interface Guard {
  /** As Chrome's --proxy-server takes it. */
  proxy: string
  refused: number
  /** The first few destinations refused, each once, in order. */
  named: Refusal[]
  destinations: () => number
  /** Its requests are said as refused, not failed. */
  wasRefused(host: string, port: number): boolean
  close(): Promise<void>
}

const VERSION = 5
const CONNECT = 1
const Reply = {
  Succeeded: 0,
  NotAllowed: 2,
  HostUnreachable: 4,
  CommandNotSupported: 7,
} as const
type Reply = (typeof Reply)[keyof typeof Reply]

export async function startGuard(judge: Judge): Promise<Guard> {
  const sockets = new Set<Socket>()
  const refusedAt = new Set<string>()
  const guard: Guard = {
    proxy: '',
    refused: 0,
    named: [],
    destinations: () => refusedAt.size,
    wasRefused: (host, port) => refusedAt.has(`${host}:${port}`),
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  const refuse = (host: string, port: number, range: string) => {
    guard.refused++
    refusedAt.add(`${host}:${port}`)
    const destination = `${host.includes(':') ? `[${host}]` : host}:${port}`
    const named = guard.named.some((r) => r.destination === destination)
    if (!named && guard.named.length < NAMED) guard.named.push({ destination, range })
  }
  const server: Server = createServer((socket) => {
    const track = (s: Socket) => {
      sockets.add(s)
      s.once('close', () => sockets.delete(s))
      s.on('error', () => s.destroy())
    }
    track(socket)
    void serve(socket, judge, refuse, track).catch(() => socket.destroy())
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('the guard proxy has no port')
  guard.proxy = `socks5://127.0.0.1:${address.port}`
  return guard
}

async function serve(
  socket: Socket,
  judge: Judge,
  refuse: (host: string, port: number, range: string) => void,
  track: (socket: Socket) => void,
): Promise<void> {
  const [version, methods] = await read(socket, 2)
  await read(socket, methods!)
  if (version !== VERSION) return void socket.destroy()
  socket.write(Buffer.from([VERSION, 0]))
  const [, command, , type] = await read(socket, 4)
  const host = await readHost(socket, type!)
  const port = (await read(socket, 2)).readUInt16BE(0)
  if (command !== CONNECT || host === undefined) return answer(socket, Reply.CommandNotSupported)
  const verdict = await judgeDestination(host, port, judge).catch(() => undefined)
  // Behind the runner's proxy a name this machine cannot resolve is the proxy's to resolve.
  const proxy = runnerProxy(host, port)
  if (!verdict && !proxy) return answer(socket, Reply.HostUnreachable)
  if (verdict && !verdict.allowed) {
    refuse(host.toLowerCase().replace(/\.$/, ''), port, verdict.range)
    return answer(socket, Reply.NotAllowed)
  }
  const upstream = await open(verdict?.address ?? host, port, proxy)
  if (!upstream) return answer(socket, Reply.HostUnreachable)
  track(upstream)
  socket.write(replyBytes(Reply.Succeeded))
  socket.pipe(upstream)
  upstream.pipe(socket)
  socket.once('close', () => upstream.destroy())
  upstream.once('close', () => socket.destroy())
}

/** Directly or through the runner's proxy; undefined when none opens. */
async function open(host: string, port: number, proxy: URL | undefined): Promise<Socket | undefined> {
  if (proxy) return tunnel(proxy, host, port)
  const upstream = connect({ host, port })
  upstream.on('error', () => upstream.destroy())
  const opened = await Promise.race([
    once(upstream, 'connect').then(() => true),
    once(upstream, 'close').then(() => false),
  ])
  return opened ? upstream : undefined
}

function answer(socket: Socket, reply: Reply): void {
  socket.end(replyBytes(reply))
}

/** A reply with the bound address left empty (0.0.0.0:0): no client of ours reads it. */
const replyBytes = (reply: Reply) => Buffer.from([VERSION, reply, 0, 1, 0, 0, 0, 0, 0, 0])

async function readHost(socket: Socket, type: number): Promise<string | undefined> {
  if (type === 1) return [...(await read(socket, 4))].join('.')
  if (type === 3) return (await read(socket, (await read(socket, 1))[0]!)).toString('latin1')
  if (type !== 4) return undefined
  const bytes = await read(socket, 16)
  const groups = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16))
  // The short form, as a URL writes it: the form wasRefused is asked with.
  return new URL(`http://[${groups.join(':')}]`).hostname.slice(1, -1)
}

/** Rejects when the socket ends first. */
async function read(socket: Socket, n: number): Promise<Buffer> {
  for (;;) {
    if (n === 0) return Buffer.alloc(0)
    const chunk = socket.read(n) as Buffer | null
    if (chunk && chunk.length === n) return chunk
    if (chunk || socket.readableEnded || socket.destroyed) throw new Error('the client left mid-request')
    await once(socket, 'readable')
  }
}
