// Seen live: after a publish, the namespace's host is fetched until it serves this build (`/` and a
// sample of the manifest's files, their bytes, sizes and the headers the build needs), within a bound.
// A publish reaches the CDN's edge seconds later (its router polls its configuration every 2.5 s,
// after a queued worker), so the host is polled with a backoff; the first full match ends it.

import { createHash } from 'node:crypto'
import { setTimeout as sleepFor } from 'node:timers/promises'
import { request, type Dispatcher } from 'undici'
import { errorCodes } from '../api/retry.ts'
import { CDN_SERVED_MAX, globMatches } from '../api/versions.ts'
import { formatBytes } from '../common/format.ts'
import type { Logger } from '../common/logger.ts'
import type { Clock } from '../common/run.ts'
import type { Manifest, ManifestFile } from './files.ts'
import { hostRequest, RECORD_PATH, type RecordFile } from './site-record.ts'
import type { PlannedRoute, ServingPlan } from './web-engine.ts'
import { isEngineFile } from './engines.ts'

/** What the deploy does when the host does not serve the build within the bound (`on-verify-failure`). */
export const ON_VERIFY_FAILURE = ['rollback', 'fail', 'warn'] as const
export type OnVerifyFailure = (typeof ON_VERIFY_FAILURE)[number]

/** The `verify` inputs. */
export interface VerifySettings {
  enabled: boolean
  /** How long the host may take to serve the build (`verify-timeout`). */
  timeoutMs: number
  onFailure: OnVerifyFailure
}

/** What a probe compares the served file with: the build's file (or the record's). */
export type ProbedFile = Pick<ManifestFile, 'path' | 'size' | 'sha256' | 'contentType'>

/** One file fetched from the host: its URL path, the build's file it must be, and what is compared. */
export interface Probe {
  /** The URL path: `/` for the site's index.html, else `/` and the file's path. */
  urlPath: string
  file: ProbedFile
  /** `content`: fetched whole, its SHA-256 and size compared; `size`: only its size (a HEAD). */
  compare: 'content' | 'size'
  /** The media type the build declared for it, compared case-insensitively without parameters. */
  contentType?: string
  /** The Content-Encoding the version's routes give it (a Unity build's compressed files). */
  contentEncoding?: string
}

/** What the host answered for a probe. */
export interface Served {
  status: number
  /** Lower-case names. */
  headers: Record<string, string | undefined>
  /** Bytes received (a GET), or the Content-Length (a HEAD); undefined when unknown. */
  bytes?: number
  /** Hex SHA-256 of the bytes received (a GET of the whole answer). */
  sha256?: string
}

/** Why a probe did not match, in words: "answered 404", "was 1.2 kB, the build's file is 2.4 kB". */
export interface Mismatch {
  urlPath: string
  reason: string
  /** A failure a later attempt would repeat (the host name does not resolve, its certificate is refused). */
  permanent?: boolean
}

/** What verification saw. */
export interface Verification {
  verified: boolean
  url: string
  durationMs: number
  attempts: number
  /** The probes, in the order checked. */
  checked: Probe[]
  /** What the host served instead, on the last attempt (only when not verified). */
  mismatch?: Mismatch
  /** The version the namespace was put back on (on-verify-failure: rollback). */
  rolledBackTo?: string
}

/** Pages checked besides `/`, engine files, largest files, and the most fetched whole per attempt. */
const PAGES_CHECKED = 3
const ENGINE_FILES_CHECKED = 6
const LARGEST_CHECKED = 3
/** A file larger than this is checked by its size alone: fetching it whole on every attempt costs too much. */
const CONTENT_CHECK_MAX_BYTES = 16 * 1024 * 1024
const PAGE = /\.html?$/i

/**
 * The files to fetch: `/` (the site's index.html), the other pages, the engine's key files (every
 * file a route gives a Content-Encoding, and its .wasm, .data, .pck, loader and framework), and the
 * largest of the others (their sizes), each once, in that order, the cheapest and likeliest to differ first.
 */
export function sampleProbes(manifest: Manifest, serving?: ServingPlan): Probe[] {
  const routes = serving?.routes ?? []
  const probes: Probe[] = []
  const taken = new Set<string>()
  const add = (file: ManifestFile, urlPath = `/${file.path}`, compare?: Probe['compare']) => {
    if (taken.has(file.path)) return
    taken.add(file.path)
    probes.push(probeFor(file, urlPath, routes, compare))
  }
  const byPath = [...manifest.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const index = byPath.find((file) => file.path === 'index.html')
  if (index) add(index, '/')
  for (const page of byPath.filter((f) => PAGE.test(f.path) && f !== index).slice(0, PAGES_CHECKED)) add(page)
  const folders = serving?.builds.map((build) => build.folder) ?? []
  const inBuild = (file: ManifestFile) =>
    folders.some((folder) => folder === '' || file.path.startsWith(`${folder}/`))
  const engine = byPath.filter(
    (file) =>
      encodingFor(file.path, routes) !== undefined ||
      file.path.endsWith('.wasm') ||
      (inBuild(file) && isEngineFile(file.path)),
  )
  for (const file of engine.slice(0, ENGINE_FILES_CHECKED)) add(file)
  const largest = byPath
    .filter((file) => !taken.has(file.path))
    .sort((a, b) => b.size - a.size)
    .slice(0, LARGEST_CHECKED)
  for (const file of largest) add(file, undefined, 'size')
  return probes
}

function probeFor(
  file: ManifestFile,
  urlPath: string,
  routes: readonly PlannedRoute[],
  compare?: Probe['compare'],
): Probe {
  const probe: Probe = {
    urlPath,
    file,
    compare: compare ?? (file.size > CONTENT_CHECK_MAX_BYTES ? 'size' : 'content'),
  }
  const contentType = file.contentType?.split(';')[0]?.trim()
  if (contentType) probe.contentType = contentType
  const encoding = encodingFor(file.path, routes)
  if (encoding) probe.contentEncoding = encoding
  return probe
}

/** The Content-Encoding the highest-priority route matching the path sends, of the first the CDN reads. */
function encodingFor(path: string, routes: readonly PlannedRoute[]): string | undefined {
  let chosen: PlannedRoute | undefined
  for (const route of routes.slice(0, CDN_SERVED_MAX)) {
    if ((!chosen || route.priority > chosen.priority) && globMatches(route.glob, `/${path}`)) chosen = route
  }
  return chosen && chosen.header.name.toLowerCase() === 'content-encoding' ? chosen.header.value : undefined
}

/** How what the host served differs from the probe's file, or undefined when it is the file. */
export function compareServed(probe: Probe, served: Served): Mismatch | undefined {
  const { urlPath, file } = probe
  const differs = (reason: string): Mismatch => ({ urlPath, reason })
  if (served.status !== 200) return differs(`answered ${served.status}, not 200 with ${file.path}`)
  if (served.bytes !== undefined && served.bytes !== file.size) {
    return differs(
      `was ${describeSize(served.bytes)}, not the build's ${file.path} of ${describeSize(file.size)}`,
    )
  }
  if (probe.compare === 'content' && served.sha256 !== file.sha256) {
    return differs(
      `had other bytes than the build's ${file.path} (SHA-256 ${short(served.sha256)}, not ${short(file.sha256)})`,
    )
  }
  if (probe.compare === 'size' && served.bytes === undefined)
    return differs(`gave no Content-Length to compare with the build's ${file.path}`)
  const type = served.headers['content-type']?.split(';')[0]?.trim()
  if (probe.contentType && type?.toLowerCase() !== probe.contentType.toLowerCase()) {
    return differs(
      type
        ? `came with Content-Type ${type}, not ${probe.contentType}`
        : `came without Content-Type ${probe.contentType}`,
    )
  }
  const encoding = served.headers['content-encoding']
  if (probe.contentEncoding && encoding?.toLowerCase() !== probe.contentEncoding.toLowerCase()) {
    return differs(
      encoding
        ? `came with Content-Encoding ${encoding}, not ${probe.contentEncoding}`
        : `came without Content-Encoding: ${probe.contentEncoding}`,
    )
  }
  return undefined
}

const describeSize = (bytes: number) =>
  bytes < 1024 ? `${bytes} bytes` : `${formatBytes(bytes)} (${bytes} bytes)`
const short = (sha256: string | undefined) => (sha256 ? `${sha256.slice(0, 12)}…` : 'unknown')

/** Fetches what the host serves for a probe, or says why it could not. */
export type FetchProbe = (probe: Probe) => Promise<Served | Mismatch>

export interface PollOptions {
  probes: readonly Probe[]
  fetch: FetchProbe
  timeoutMs: number
  clock: Clock
  /** Waits between attempts (default a timer); rejects when the signal aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
  signal: AbortSignal
  /** Hears of each attempt that did not match yet. */
  onAttempt?: (attempt: number, mismatch: Mismatch) => void
}

/** The first wait, and the longest: the router's 2.5 s poll is waited out in a few short steps. */
export const FIRST_WAIT_MS = 500
export const LONGEST_WAIT_MS = 10_000

/**
 * Fetches the probes until every one matches, within `timeoutMs`. An attempt stops at its first
 * mismatch (the host does not serve the build yet); a probe that matched is not fetched again (the
 * host served the build's bytes for it, and a publish only moves forward). The waits double from
 * FIRST_WAIT_MS to LONGEST_WAIT_MS, the last one cut to the bound; a permanent failure ends at once.
 */
export async function pollUntilLive(
  options: PollOptions,
): Promise<{ verified: boolean; attempts: number; durationMs: number; mismatch?: Mismatch }> {
  const { clock, signal, timeoutMs } = options
  const sleep = options.sleep ?? ((ms, s) => sleepFor(ms, undefined, { signal: s }))
  const started = clock.now()
  const pending = [...options.probes]
  let wait = FIRST_WAIT_MS
  for (let attempt = 1; ; attempt++) {
    signal.throwIfAborted()
    let mismatch: Mismatch | undefined
    while (pending.length) {
      const answer = await options.fetch(pending[0]!)
      mismatch = 'reason' in answer ? answer : compareServed(pending[0]!, answer)
      if (mismatch) break
      pending.shift()
    }
    const durationMs = clock.now() - started
    if (!mismatch) return { verified: true, attempts: attempt, durationMs }
    options.onAttempt?.(attempt, mismatch)
    const left = timeoutMs - durationMs
    if (mismatch.permanent || left <= 0) return { verified: false, attempts: attempt, durationMs, mismatch }
    await sleep(Math.min(wait, left), signal)
    wait = Math.min(wait * 2, LONGEST_WAIT_MS)
  }
}

export interface FetchOptions {
  dispatcher: Dispatcher
  signal: AbortSignal
  /** A request with no answer, or no further bytes of one, for this long fails (and the poll goes on). */
  stallMs: number
  /** The Authorization header of a private namespace's hosts (`Basic ...`). */
  authorization?: string
}

/**
 * A FetchProbe for the host of `url`, through the run's dispatcher (see hostRequest). Bytes are taken
 * as sent (no decompression), so that they compare with the uploaded file's.
 */
export function hostFetcher(url: string, options: FetchOptions): FetchProbe {
  const { origin, base, headers } = hostRequest(url, options.authorization)
  return async (probe) => {
    const path = `${base}${probe.urlPath.split('/').map(encodeURIComponent).join('/')}`
    try {
      const answer = await request(`${origin}${path}`, {
        dispatcher: options.dispatcher,
        method: probe.compare === 'size' ? 'HEAD' : 'GET',
        headers,
        signal: options.signal,
        headersTimeout: options.stallMs,
        bodyTimeout: options.stallMs,
      })
      const served: Served = { status: answer.statusCode, headers: flatHeaders(answer.headers) }
      if (probe.compare === 'size') {
        await answer.body.dump()
        const length = served.headers['content-length']
        if (length !== undefined && /^\d+$/.test(length)) served.bytes = Number(length)
        return served
      }
      if (answer.statusCode !== 200) {
        await answer.body.dump()
        return served
      }
      const hash = createHash('sha256')
      let bytes = 0
      for await (const chunk of answer.body as AsyncIterable<Buffer>) {
        bytes += chunk.length
        // More than the file: no need to read the rest.
        if (bytes > probe.file.size) break
        hash.update(chunk)
      }
      return { ...served, bytes, sha256: bytes > probe.file.size ? undefined : hash.digest('hex') }
    } catch (error) {
      options.signal.throwIfAborted()
      return { urlPath: probe.urlPath, ...unreachable(error, new URL(url).hostname) }
    }
  }
}

function flatHeaders(headers: Record<string, string | string[] | undefined>): Served['headers'] {
  const flat: Served['headers'] = {}
  for (const [name, value] of Object.entries(headers)) {
    flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value
  }
  return flat
}

const TLS_CODE = /^(ERR_SSL|ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_TLS_CERT)/

/** A request that got no answer, in words; a name that does not resolve or a refused certificate is permanent. */
function unreachable(error: unknown, host: string): Omit<Mismatch, 'urlPath'> {
  const codes = errorCodes(error)
  const code = codes.find((c) => c !== 'UND_ERR' && c.length > 0) ?? ''
  if (codes.includes('ENOTFOUND'))
    return {
      reason: `could not be fetched: DNS: the host name ${host} does not resolve (ENOTFOUND)`,
      permanent: true,
    }
  const tls = codes.find((c) => TLS_CODE.test(c))
  if (tls)
    return {
      reason: `could not be fetched: TLS: the certificate of ${host} was refused (${tls})`,
      permanent: true,
    }
  if (codes.includes('EAI_AGAIN'))
    return {
      reason: `could not be fetched: DNS: the host name ${host} could not be resolved for now (EAI_AGAIN)`,
    }
  const message = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error)
  return { reason: `could not be fetched: ${message}${code ? ` (${code})` : ''}` }
}

/** `/`, `/Build/game.wasm` (Content-Encoding: br), ...: what was checked, for the log and the report. */
export function describeChecked(probes: readonly Probe[]): string {
  return probes
    .map((probe) => {
      const what = [probe.compare === 'content' ? 'bytes' : 'size']
      if (probe.contentType) what.push(probe.contentType)
      if (probe.contentEncoding) what.push(`Content-Encoding: ${probe.contentEncoding}`)
      return `${probe.urlPath} (${what.join(', ')})`
    })
    .join(', ')
}

/** "after 2.6 s (3 attempts)". */
export function describeTiming(verification: Pick<Verification, 'durationMs' | 'attempts'>): string {
  const { durationMs, attempts } = verification
  return `${(durationMs / 1000).toFixed(1)} s (${attempts} ${attempts === 1 ? 'check' : 'checks'})`
}

export interface VerifyLiveOptions {
  url: string
  manifest: Manifest
  /**
   * The record this run put on the site: its bytes prove in one fetch that the host serves this
   * build, every file of it (its commit and digest), not only the sample. It is fetched after the
   * sampled files, which prove what it cannot (each served with its bytes and the headers it needs),
   * and which say best what the host serves instead ("/ was 28 bytes, not the build's index.html").
   */
  record?: Pick<RecordFile, 'path' | 'size' | 'sha256' | 'contentType'>
  serving: ServingPlan | undefined
  settings: VerifySettings
  run: { dispatcher: Dispatcher; signal: AbortSignal; clock: Clock; timeouts: { stallMs: number } }
  logger: Pick<Logger, 'info' | 'debug'>
  sleep?: PollOptions['sleep']
  /** The Authorization header of a private namespace's hosts. */
  authorization?: string
}

/** Polls the host of `url` until it serves the build (see pollUntilLive), and logs what it saw. */
export async function verifyLive(options: VerifyLiveOptions): Promise<Verification> {
  const { url, settings, run, logger } = options
  const probes = sampleProbes(options.manifest, options.serving)
  if (options.record) probes.push(recordProbe(options.record))
  logger.info(
    `Checking that ${url} serves this build, for up to ${settings.timeoutMs / 1000} s: ${describeChecked(probes)}`,
  )
  const polled = await pollUntilLive({
    probes,
    fetch: hostFetcher(url, {
      dispatcher: run.dispatcher,
      signal: run.signal,
      stallMs: run.timeouts.stallMs,
      authorization: options.authorization,
    }),
    timeoutMs: settings.timeoutMs,
    clock: run.clock,
    signal: run.signal,
    sleep: options.sleep,
    onAttempt: (attempt, mismatch) =>
      logger.debug(`Check ${attempt}: ${url.replace(/\/$/, '')}${mismatch.urlPath} ${mismatch.reason}`),
  })
  const seen: Verification = { ...polled, url, checked: probes }
  if (seen.verified) {
    logger.info(
      `Live at ${url}: seen after ${describeTiming(seen)}, ${probes.length} ${probes.length === 1 ? 'file' : 'files'} matching the build`,
    )
  }
  return seen
}

/** The record fetched whole: it matches only when the host serves this very build. */
function recordProbe(record: NonNullable<VerifyLiveOptions['record']>): Probe {
  const { path, size, sha256, contentType } = record
  return { urlPath: `/${RECORD_PATH}`, file: { path, size, sha256, contentType }, compare: 'content' }
}

/** What the host served instead: "/Build/game.wasm came without Content-Encoding: br". */
export function describeMismatch(url: string, mismatch: Mismatch): string {
  return `${url.replace(/\/$/, '')}${mismatch.urlPath} ${mismatch.reason}`
}
