// On a runner behind a proxy, the guard's allowed connections go on through it, as the deploy's own
// requests do, so that the browser still reaches the deployed host.

import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { PROXY_VARIABLES } from '../../api/http.ts'

/** A proxy's answer to CONNECT is a few hundred bytes. */
const ANSWER_MAX = 16 * 1024

export function runnerProxy(host: string, port: number, env = process.env): URL | undefined {
  const named = PROXY_VARIABLES.map((name) => env[name]).find(Boolean)
  const proxy = named ? URL.parse(named) : null
  if (!proxy || !/^https?:$/.test(proxy.protocol)) return undefined
  return bypassed(host, port, env.no_proxy ?? env.NO_PROXY ?? '') ? undefined : proxy
}

/** NO_PROXY as undici reads it: `*`, or names (a leading `.` or `*.` alike) that cover their subdomains, with an optional port. */
function bypassed(host: string, port: number, noProxy: string): boolean {
  const name = host.toLowerCase()
  return noProxy
    .split(/[\s,]+/)
    .filter(Boolean)
    .some((entry) => {
      if (entry === '*') return true
      const [, entryHost = '', entryPort] = /^(.*?)(?::(\d+))?$/.exec(entry.toLowerCase()) ?? []
      const bare = entryHost.replace(/^\*?\./, '')
      if (entryPort && Number(entryPort) !== port) return false
      return name === bare || name.endsWith(`.${bare}`)
    })
}

/** HTTP CONNECT; undefined when the proxy refuses or is gone. */
export async function tunnel(proxy: URL, host: string, port: number): Promise<Socket | undefined> {
  const socket = connect({ host: proxy.hostname.replace(/^\[|\]$/g, ''), port: Number(proxy.port) || 80 })
  socket.on('error', () => socket.destroy())
  const target = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`
  const credentials = proxy.username
    ? `Proxy-Authorization: Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}\r\n`
    : ''
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${credentials}\r\n`)
  let head = Buffer.alloc(0)
  while (!head.includes('\r\n\r\n')) {
    if (head.length > ANSWER_MAX) return void socket.destroy()
    const chunk = socket.read() as Buffer | null
    if (chunk) head = Buffer.concat([head, chunk])
    else if (socket.readableEnded || socket.destroyed) return void socket.destroy()
    else await Promise.race([once(socket, 'readable'), once(socket, 'close')])
  }
  const end = head.indexOf('\r\n\r\n') + 4
  if (!/^HTTP\/1\.[01] 2\d\d /.test(head.toString('latin1'))) return void socket.destroy()
  // Bytes the tunnel's far end sent already, behind the proxy's answer.
  if (end < head.length) socket.unshift(head.subarray(end))
  return socket
}
