// The page may connect to any host on the internet and to its own deployed origin, never to the
// runner's own network (this machine, the cloud's metadata address, private networks), which a build's
// code could otherwise reach from inside the runner.

import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'

const RANGES: Array<[range: string, type: 'ipv4' | 'ipv6', prefix: string, bits: number]> = [
  ['this host', 'ipv4', '0.0.0.0', 8],
  ['loopback', 'ipv4', '127.0.0.0', 8],
  ['link-local', 'ipv4', '169.254.0.0', 16],
  ['private', 'ipv4', '10.0.0.0', 8],
  ['private', 'ipv4', '172.16.0.0', 12],
  ['private', 'ipv4', '192.168.0.0', 16],
  ['this host', 'ipv6', '::', 128],
  ['loopback', 'ipv6', '::1', 128],
  ['link-local', 'ipv6', 'fe80::', 10],
  ['unique-local', 'ipv6', 'fc00::', 7],
]
const LISTS = RANGES.map(([range, type, prefix, bits]) => {
  const list = new BlockList()
  list.addSubnet(prefix, bits, type)
  return { range, type, list }
})

/** "loopback", "private"…, or undefined for an address outside the runner's network. */
export function internalRange(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  const version = isIP(bare)
  if (!version) return undefined
  // An IPv4 address written as IPv6 (::ffff:127.0.0.1) reaches the IPv4 one.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)?.[1]
  if (mapped) return internalRange(mapped)
  const type = version === 4 ? 'ipv4' : 'ipv6'
  return LISTS.find((entry) => entry.type === type && entry.list.check(bare, type))?.range
}

type Verdict = { allowed: true; address: string } | { allowed: false; range: string }

export interface Judge {
  /** The deployed origin's: the one internal destination allowed. */
  own: { host: string; port: number }
  /** Default: the system's resolver. */
  resolve?: (host: string) => Promise<string[]>
}

const resolveAll = async (host: string) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address)

/** `localhost` and any name under it are this machine, whatever DNS says (RFC 6761), as in Chrome. */
const isLocalhost = (host: string) => host === 'localhost' || host.endsWith('.localhost')

const bareHost = (host: string) =>
  host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')

/**
 * A name is refused when any of its addresses is the runner's own, so that a name pointed at 127.0.0.1
 * is no way around it. The address returned is the one connected to, so no second lookup can answer
 * otherwise. A name that does not resolve rejects, with the resolver's error.
 */
export async function judgeDestination(host: string, port: number, judge: Judge): Promise<Verdict> {
  const name = bareHost(host)
  const own = name === judge.own.host && port === judge.own.port
  const addresses = isIP(name)
    ? [name]
    : isLocalhost(name)
      ? ['127.0.0.1']
      : await (judge.resolve ?? resolveAll)(name)
  if (!addresses.length) throw new Error(`${name} resolves to no address`)
  if (own) return { allowed: true, address: addresses[0]! }
  for (const address of addresses) {
    const range = internalRange(address)
    if (range) return { allowed: false, range }
  }
  return { allowed: true, address: addresses[0]! }
}

export function destinationOf(url: URL): { host: string; port: number } {
  const port = url.port ? Number(url.port) : url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : 80
  return { host: bareHost(url.hostname), port }
}
