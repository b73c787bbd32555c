// The emulator's options and their defaults (the real service's values).

import { MAX_PARTS, PART_SIZE, SERVERS_PAGE_SIZE, SITE_BYTES_LIMIT } from '../api/rules.ts'
import { resolveFaults, type FaultOptions, type ResolvedFaults } from './faults.ts'
import { DEFAULT_SEED, type Seed } from './seed.ts'

export interface RateLimit {
  writesPerMinute: number
  readsPerMinute: number
}

export interface EmulatorOptions {
  /** Default '127.0.0.1'. */
  host?: string
  /**
   * The CDN domain the namespaces' live sites are served under, on the API's port, by the request's
   * Host: `{game name_id}--{namespace name_id}.{cdnDomain}` (and `{game name_id}.{cdnDomain}` for the
   * namespace named `prod`), as on the hosted service's `rivet.game`. Default 'localhost', so that
   * `demo-game--production.localhost:PORT` opens in a browser on the same machine.
   */
  cdnDomain?: string
  /** Default 0 (any free port). */
  port?: number
  /** The object store's port, its own origin. Default 0 (any free port). */
  storePort?: number
  /** Default DEFAULT_SEED. */
  seed?: Seed
  /**
   * Files of at least this many bytes are uploaded in parts. Default Infinity: the real service gives
   * every file of a CDN site one PUT, whatever its size. The interface allows parts, so clients must
   * handle them: set it to exercise that path.
   */
  multipartThreshold?: number
  /** Default PART_SIZE (100 MiB). */
  partSize?: number
  /** Default MAX_PARTS (10,000). */
  maxParts?: number
  /** The total size of a site must stay under it (a total >= limit is refused). Default SITE_BYTES_LIMIT (10^9). */
  siteBytesLimit?: number
  /** Servers per page when destroyed servers are included. Default 64. */
  serversPageSize?: number
  /**
   * Per client address and per endpoint, counted in fixed 15-minute windows of 15 times these
   * numbers. Default 16 writes and 128 reads a minute; false turns it off.
   */
  rateLimit?: RateLimit | false
  /** Clock in ms, default Date.now: token and URL expiry, rate limits. */
  now?: () => number
  /** Where uploaded bytes go; default a fresh temp dir that close() removes. */
  storageDir?: string
  /**
   * Counts each PUT's bytes and keeps none: no disk, no MD5 (the ETag is not one, so the client's
   * check of it is skipped). For the benchmark, so that what a deploy costs per file shows; a
   * completed site's files cannot be read back. Default false.
   */
  discardBytes?: boolean
  /** Receives one access-log line per request: method, path without query string, status. */
  log?: (line: string) => void
  /** Faults to inject (errors, resets, stalls, corrupted parts): see FaultOptions. Default none. */
  faults?: FaultOptions
  /**
   * Milliseconds every request waits before it is handled: the round trip of a real network, which
   * loopback lacks (the benchmark chooses the default concurrency with it). Default 0.
   */
  latencyMs?: number
  /**
   * Milliseconds the object store waits before it answers each accepted PUT (after its body arrived):
   * the round trip to a store 20 to 150 ms away, as a CI runner sees it. Default 0.
   */
  putLatencyMs?: number
}

export interface ResolvedOptions {
  host: string
  cdnDomain: string
  port: number
  storePort: number
  seed: Seed
  multipartThreshold: number
  partSize: number
  maxParts: number
  siteBytesLimit: number
  serversPageSize: number
  rateLimit: RateLimit | false
  now: () => number
  storageDir: string | undefined
  discardBytes: boolean
  log: ((line: string) => void) | undefined
  faults: ResolvedFaults | undefined
  latencyMs: number
  putLatencyMs: number
}

export { SERVERS_PAGE_SIZE }
const DEFAULT_RATE_LIMIT: RateLimit = { writesPerMinute: 16, readsPerMinute: 128 }
const CDN_DOMAIN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/

export function resolveOptions(options: EmulatorOptions): ResolvedOptions {
  const resolved: ResolvedOptions = {
    host: options.host ?? '127.0.0.1',
    cdnDomain: (options.cdnDomain ?? 'localhost').toLowerCase().replace(/\.$/, ''),
    port: options.port ?? 0,
    storePort: options.storePort ?? 0,
    seed: options.seed ?? DEFAULT_SEED,
    multipartThreshold: options.multipartThreshold ?? Number.POSITIVE_INFINITY,
    partSize: options.partSize ?? PART_SIZE,
    maxParts: options.maxParts ?? MAX_PARTS,
    siteBytesLimit: options.siteBytesLimit ?? SITE_BYTES_LIMIT,
    serversPageSize: options.serversPageSize ?? SERVERS_PAGE_SIZE,
    rateLimit: options.rateLimit ?? DEFAULT_RATE_LIMIT,
    now: options.now ?? Date.now,
    storageDir: options.storageDir,
    discardBytes: options.discardBytes ?? false,
    log: options.log,
    faults: resolveFaults(options.faults),
    latencyMs: options.latencyMs ?? 0,
    putLatencyMs: options.putLatencyMs ?? 0,
  }
  if (!CDN_DOMAIN.test(resolved.cdnDomain)) {
    throw new RangeError(
      `emulator option cdnDomain must be a host name (letters, digits, "-" and "."), got ${JSON.stringify(options.cdnDomain)}`,
    )
  }
  if (!Number.isSafeInteger(resolved.latencyMs) || resolved.latencyMs < 0) {
    throw new RangeError(`emulator option latencyMs must be a whole number of ms, got ${resolved.latencyMs}`)
  }
  if (!Number.isSafeInteger(resolved.putLatencyMs) || resolved.putLatencyMs < 0) {
    throw new RangeError(
      `emulator option putLatencyMs must be a whole number of ms, got ${resolved.putLatencyMs}`,
    )
  }
  const threshold = resolved.multipartThreshold
  if (threshold !== Number.POSITIVE_INFINITY && (!Number.isSafeInteger(threshold) || threshold < 1)) {
    throw new RangeError(`emulator option multipartThreshold must be a positive integer, got ${threshold}`)
  }
  for (const name of ['partSize', 'maxParts', 'siteBytesLimit', 'serversPageSize'] as const) {
    if (!Number.isSafeInteger(resolved[name]) || resolved[name] < 1) {
      throw new RangeError(`emulator option ${name} must be a positive integer, got ${resolved[name]}`)
    }
  }
  return resolved
}
