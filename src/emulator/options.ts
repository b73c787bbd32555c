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
   * `demo-game--staging.localhost:PORT` opens in a browser on the same machine.
   */
  cdnDomain?: string
  /** Default 0 (any free port). */
  port?: number
  /** The object store's port, its own origin. Default 0 (any free port). */
  storePort?: number
  /** Default DEFAULT_SEED. */
  seed?: Seed
  /**
   * Files of at least this many bytes are S3 multipart uploads: one UploadPart URL per part (valid 6
   * hours, signed over content-length and host only: the content type is set when the multipart
   * upload is created). Default MULTIPART_THRESHOLD (5 MiB), as the service since v24.6. Infinity
   * keeps the v24.5 shape: one PutObject per file whatever its size.
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
  /**
   * Milliseconds from a change of a namespace's CDN config (a publish, a domain added or removed) to
   * the moment its host serves it: the service's queued worker rebuilds the config, then the CDN's
   * router picks it up on its next poll (every 2.5 s). Default PUBLISH_DELAY_MS (3,000: a worker run
   * plus a poll interval, a plausible wait rather than the worst case); 0 applies it at once.
   */
  publishDelayMs?: number
  /**
   * Whether a namespace created directly on a version serves it (once publishDelayMs has passed).
   * Default false: the service queues the namespace's CDN config rebuild before its CDN record exists,
   * and when the worker wins that race nothing rebuilds the config until the namespace's version
   * changes or a domain is added or removed. The emulator always plays that worst case unless this is
   * true. Namespaces of the seed serve their version from the start either way.
   */
  serveOnCreate?: boolean
  /**
   * 'pending' (the default): a custom domain starts pending (the namespace read shows
   * `verification_status: pending` and the CNAME to create) and is served by Host only once marked
   * verified, through `POST /_emulator/domains/{domain}/verify` or Emulator.verifyDomain; at most 10
   * pending host names per game. 'at-once': each domain is active when added.
   */
  verifyDomains?: 'pending' | 'at-once'
  /**
   * What `GET /cloud/bootstrap` answers as `domains.cdn`. Default the bare CDN domain, as the real
   * service answers (a client reaches it on the API's scheme and port, the emulator's CDN sharing the
   * API's port). null answers no `domains.cdn`, as a self-hosted service without DNS does.
   */
  bootstrapCdnDomain?: string | null
  /**
   * The CDN's fixed page layer: on pages (`/`, a path ending in `/`, `*.html`) it sets
   * `Cache-Control: no-cache, no-store` and removes Content-Security-Policy, X-Frame-Options and
   * X-XSS-Protection, after the routes' headers. Default true; false serves the routes' headers as set.
   */
  pageLayer?: boolean
  /**
   * Seeds the order the emulator gives a version's routes when it has more than 10 (the CDN reads only
   * the first 10 of an unordered map): a shuffle that never keeps the first 10 given. Default 1.
   */
  routeOrderSeed?: number
}

/** The size from which the service (v24.6 and later) makes a CDN file a multipart upload. */
export const MULTIPART_THRESHOLD = 5 * 1024 * 1024
/** See EmulatorOptions.publishDelayMs. */
export const PUBLISH_DELAY_MS = 3000

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
  publishDelayMs: number
  serveOnCreate: boolean
  verifyDomains: 'pending' | 'at-once'
  bootstrapCdnDomain: string | null | undefined
  pageLayer: boolean
  routeOrderSeed: number
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
    multipartThreshold: options.multipartThreshold ?? MULTIPART_THRESHOLD,
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
    publishDelayMs: options.publishDelayMs ?? PUBLISH_DELAY_MS,
    serveOnCreate: options.serveOnCreate ?? false,
    verifyDomains: options.verifyDomains ?? 'pending',
    bootstrapCdnDomain: options.bootstrapCdnDomain,
    pageLayer: options.pageLayer ?? true,
    routeOrderSeed: options.routeOrderSeed ?? 1,
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
  if (!Number.isSafeInteger(resolved.publishDelayMs) || resolved.publishDelayMs < 0) {
    throw new RangeError(
      `emulator option publishDelayMs must be a whole number of ms, got ${resolved.publishDelayMs}`,
    )
  }
  if (resolved.verifyDomains !== 'pending' && resolved.verifyDomains !== 'at-once') {
    throw new RangeError(
      `emulator option verifyDomains must be "pending" or "at-once", got ${JSON.stringify(options.verifyDomains)}`,
    )
  }
  if (!Number.isSafeInteger(resolved.routeOrderSeed)) {
    throw new RangeError(`emulator option routeOrderSeed must be an integer, got ${resolved.routeOrderSeed}`)
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
