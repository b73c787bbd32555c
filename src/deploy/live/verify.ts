// After a publish the host is polled until it serves this build (a sample of its files: bytes, sizes,
// headers), or, for a version the run did not build, another record than before: a publish reaches the
// CDN's edge seconds later.

import { createHash } from 'node:crypto'
import type { Dispatcher } from 'undici'
import { errorCodes, networkFailure, type NetworkFailureKind } from '../../common/network.ts'
import { pollUntil, type PollOptions as LoopOptions } from '../../common/poll.ts'
import { CDN_SERVED_MAX, globMatches, isPage } from '../../api/versions.ts'
import { errorMessage, formatBytes, formatSeconds, plural } from '../../common/format.ts'
import type { Logger } from '../../common/logger.ts'
import type { VerifySettings } from '../../inputs/common.ts'
import { systemTimer, type Clock, type Timer } from '../../common/timeouts.ts'
import type { ManifestFile } from '../collect/files.ts'
import { hostGet, hostOptionsOf, readRecordBody, RECORD_PATH, type HostOptions } from '../collect/record.ts'
import type { PlannedRoute, ServingPlan } from '../collect/web-engine.ts'
import { isEngineFile, isWasm } from '../collect/engines.ts'
import type { OtherVersion } from './meanwhile.ts'
import { waitingSayer } from './waiting.ts'

type ProbedFile = Pick<ManifestFile, 'path' | 'size' | 'sha256' | 'contentType'>

export interface Probe {
  /** `/` for the site's index.html. */
  urlPath: string
  file: ProbedFile
  /**
   * `content`: fetched whole, SHA-256 and size compared; `size`: a HEAD, its Content-Length compared;
   * `other`: fetched whole, a record whose SHA-256 differs from the file's (the record served before).
   */
  compare: 'content' | 'size' | 'other'
  contentType?: string
  contentEncoding?: string
}

export interface Served {
  status: number
  /** Lower-case names. */
  headers: Record<string, string | undefined>
  bytes?: number
  sha256?: string
  /** With `compare: 'other'`: why the answer is no record, when it is none. */
  notRecord?: string
}

export interface Mismatch {
  urlPath: string
  reason: string
  status?: number
  /** 200 with other bytes than the build's file. */
  otherBytes?: boolean
  /** A later attempt would repeat it (the name does not resolve, the certificate is refused). */
  permanent?: boolean
  /** Another run's version: no later attempt can see this one. */
  publishedMeanwhile?: OtherVersion
  /** Why what the namespace is on can never be seen serving the build. */
  cannotServe?: string
}

export interface Verification {
  verified: boolean
  url: string
  durationMs: number
  attempts: number
  checked: Probe[]
  mismatch?: Mismatch
  rolledBackTo?: string
  cancelled?: boolean
}

/** What the host must serve: this build's files, or a record other than the one it served before. */
export type Expected =
  | {
      files: readonly ProbedFile[]
      /** Proves every file in one fetch; after the sample, which proves headers and says best what differs. */
      record?: ProbedFile
      serving?: ServingPlan
    }
  | { otherThan: { sha256: string } }

const PAGES_CHECKED = 3
const ENGINE_FILES_CHECKED = 6
const LARGEST_CHECKED = 3
/** Fetching a larger file whole on every attempt costs too much. */
const CONTENT_CHECK_MAX_BYTES = 16 * 1024 * 1024

/** `/`, the other pages, the engine's files, then the largest others (by size): likeliest to differ first. */
export function sampleProbes(files: readonly ProbedFile[], serving?: ServingPlan): Probe[] {
  const routes = serving?.routes ?? []
  const probes: Probe[] = []
  const taken = new Set<string>()
  const add = (file: ProbedFile, urlPath = `/${file.path}`, compare?: Probe['compare']) => {
    if (taken.has(file.path)) return
    taken.add(file.path)
    const probe: Probe = {
      urlPath,
      file,
      compare: compare ?? (file.size > CONTENT_CHECK_MAX_BYTES ? 'size' : 'content'),
    }
    const contentType = file.contentType?.split(';')[0]?.trim()
    if (contentType) probe.contentType = contentType
    const encoding = encodingFor(file.path, routes)
    if (encoding) probe.contentEncoding = encoding
    probes.push(probe)
  }
  const byPath = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const index = byPath.find((file) => file.path === 'index.html')
  if (index) add(index, '/')
  for (const page of byPath.filter((f) => isPage(`/${f.path}`) && f !== index).slice(0, PAGES_CHECKED))
    add(page)
  const folders = serving?.builds.map((build) => build.folder) ?? []
  const inBuild = (file: ProbedFile) =>
    folders.some((folder) => folder === '' || file.path.startsWith(`${folder}/`))
  const engine = byPath.filter(
    (file) =>
      encodingFor(file.path, routes) !== undefined ||
      isWasm(file.path) ||
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

/** Of the routes the CDN reads, the highest-priority match's Content-Encoding. */
function encodingFor(path: string, routes: readonly PlannedRoute[]): string | undefined {
  let chosen: PlannedRoute | undefined
  for (const route of routes.slice(0, CDN_SERVED_MAX)) {
    if ((!chosen || route.priority > chosen.priority) && globMatches(route.glob, `/${path}`)) chosen = route
  }
  return chosen && chosen.header.name.toLowerCase() === 'content-encoding' ? chosen.header.value : undefined
}

export function compareServed(probe: Probe, served: Served): Mismatch | undefined {
  const { urlPath, file } = probe
  const differs = (reason: string): Mismatch =>
    served.status === 200 ? { urlPath, reason } : { urlPath, reason, status: served.status }
  if (probe.compare === 'other') {
    if (served.status !== 200) return differs(`answered ${served.status}`)
    if (served.notRecord !== undefined) return differs(served.notRecord)
    if (served.sha256 !== file.sha256) return undefined
    return differs('is still the record of the build it served before the publish')
  }
  if (served.status !== 200) return differs(`answered ${served.status}, not 200 with ${file.path}`)
  if (served.bytes !== undefined && served.bytes !== file.size) {
    const reason = `was ${describeSize(served.bytes)}, not the build's ${file.path} of ${describeSize(file.size)}`
    return { ...differs(reason), otherBytes: true }
  }
  if (probe.compare === 'content' && served.sha256 !== file.sha256) {
    const reason = `had other bytes than the build's ${file.path} (SHA-256 ${short(served.sha256)}, not ${short(file.sha256)})`
    return { ...differs(reason), otherBytes: true }
  }
  if (probe.compare === 'size' && served.bytes === undefined)
    return differs(`gave no Content-Length to compare with the build's ${file.path}`)
  const type = served.headers['content-type']?.split(';')[0]?.trim()
  const header = (name: string, got: string | undefined, wanted: string | undefined, colon = '') => {
    if (!wanted || got?.toLowerCase() === wanted.toLowerCase()) return undefined
    return differs(got ? `came with ${name} ${got}, not ${wanted}` : `came without ${name}${colon} ${wanted}`)
  }
  return (
    header('Content-Type', type, probe.contentType) ??
    header('Content-Encoding', served.headers['content-encoding'], probe.contentEncoding, ':')
  )
}

const describeSize = (bytes: number) =>
  bytes < 1024 ? `${bytes} bytes` : `${formatBytes(bytes)} (${bytes} bytes)`
const short = (sha256: string | undefined) => (sha256 ? `${sha256.slice(0, 12)}…` : 'unknown')

export type FetchProbe = (probe: Probe) => Promise<Served | Mismatch>

export interface PollOptions extends LoopOptions<Mismatch> {
  probes: readonly Probe[]
  fetch: FetchProbe
  /** Asked after a check that did not see it: why no later check can (another run published meanwhile...). */
  cannotSee?: (mismatch: Mismatch) => Promise<Mismatch | undefined>
}

/** An attempt stops at its first mismatch; a probe that matched is not fetched again (a publish only moves forward). */
export async function pollUntilLive(
  options: PollOptions,
): Promise<{ verified: boolean; attempts: number; durationMs: number; mismatch?: Mismatch }> {
  const pending = [...options.probes]
  const check = async (): Promise<Mismatch | undefined> => {
    while (pending.length) {
      const answer = await options.fetch(pending[0]!)
      const mismatch = 'reason' in answer ? answer : compareServed(pending[0]!, answer)
      if (mismatch) return (await options.cannotSee?.(mismatch)) ?? mismatch
      pending.shift()
    }
    return undefined
  }
  const { seen, attempts, durationMs, notYet } = await pollUntil(check, options)
  return { verified: seen, attempts, durationMs, ...(notYet ? { mismatch: notYet } : {}) }
}

/** Bytes as sent, to compare with the uploaded file's. */
export function hostFetcher(url: string, options: HostOptions): FetchProbe {
  return async (probe) => {
    const path = probe.urlPath.split('/').map(encodeURIComponent).join('/')
    try {
      const answer = await hostGet(url, path, options, probe.compare === 'size' ? 'HEAD' : 'GET')
      const served: Served = { status: answer.statusCode, headers: flatHeaders(answer.headers) }
      if (probe.compare === 'size' || answer.statusCode !== 200) {
        await answer.body.dump()
        const length = served.headers['content-length']
        if (probe.compare === 'size' && length !== undefined && /^\d+$/.test(length))
          served.bytes = Number(length)
        return served
      }
      const body = answer.body as AsyncIterable<Buffer>
      if (probe.compare === 'other') {
        const read = await readRecordBody(body)
        if ('notRecord' in read) return { ...served, notRecord: read.notRecord }
        return { ...served, bytes: read.bytes.size, sha256: read.bytes.sha256 }
      }
      const hash = createHash('sha256')
      let bytes = 0
      for await (const chunk of body) {
        bytes += chunk.length
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

function unreachable(error: unknown, host: string): Omit<Mismatch, 'urlPath'> {
  const failure = networkFailure(error)
  const fetched = 'could not be fetched:'
  const known: Partial<Record<NetworkFailureKind, string>> = {
    dns: `DNS: the host name ${host} does not resolve`,
    tls: `TLS: the certificate of ${host} was refused`,
    'dns-again': `DNS: the host name ${host} could not be resolved for now`,
  }
  const said = failure && known[failure.kind]
  if (said) {
    const reason = `${fetched} ${said} (${failure.code})`
    return failure.kind === 'dns-again' ? { reason } : { reason, permanent: true }
  }
  const message = errorMessage(error).split('\n')[0]!
  const code = failure?.code ?? errorCodes(error)[0]
  return { reason: `${fetched} ${message}${code ? ` (${code})` : ''}` }
}

export function describeChecked(probes: readonly Probe[]): string {
  return probes
    .map((probe) => {
      const what = [probe.compare === 'size' ? 'size' : 'bytes']
      if (probe.contentType) what.push(probe.contentType)
      if (probe.contentEncoding) what.push(`Content-Encoding: ${probe.contentEncoding}`)
      return `${probe.urlPath} (${what.join(', ')})`
    })
    .join(', ')
}

/** "2.6 s (3 checks)". */
export function describeTiming(verification: Pick<Verification, 'durationMs' | 'attempts'>): string {
  const { durationMs, attempts } = verification
  return `${formatSeconds(durationMs)} (${plural(attempts, 'check')})`
}

/** "/Build/game.wasm came without Content-Encoding: br". */
export function describeMismatch(url: string, mismatch: Mismatch): string {
  return `${url.replace(/\/$/, '')}${mismatch.urlPath} ${mismatch.reason}`
}

export interface VerifyLiveOptions {
  url: string
  expected: Expected
  settings: VerifySettings
  run: {
    dispatcher: Dispatcher
    signal: AbortSignal
    clock: Clock
    timeouts: { stallMs: number }
    timer?: Timer
  }
  logger: Pick<Logger, 'info' | 'debug'>
  sleep?: PollOptions['sleep']
  authorization?: string
  cannotSee?: PollOptions['cannotSee']
  servedBefore?: string
}

export async function verifyLive(options: VerifyLiveOptions): Promise<Verification> {
  const { url, expected, settings, run, logger } = options
  const probes = probesFor(expected)
  const changed = 'otherThan' in expected
  const build = changed ? 'another build than before' : 'this build'
  const checking = changed ? `/${RECORD_PATH} (its record)` : describeChecked(probes)
  logger.info(`Checking that ${url} serves ${build}, for up to ${settings.timeoutMs / 1000} s: ${checking}`)
  const host = hostOptionsOf(run, options.authorization)
  const waiting = waitingSayer({ url, build, host, servedBefore: options.servedBefore, logger })
  const polled = await pollUntilLive({
    probes,
    fetch: hostFetcher(url, host),
    timeoutMs: settings.timeoutMs,
    clock: run.clock,
    signal: run.signal,
    sleep: options.sleep,
    cannotSee: options.cannotSee,
    onNotYet: (attempt, mismatch) => logger.debug(`Check ${attempt}: ${describeMismatch(url, mismatch)}`),
    progress: { timer: run.timer ?? systemTimer, say: waiting.say },
  }).finally(waiting.end)
  const seen: Verification = { ...polled, url, checked: probes }
  if (seen.verified) {
    const files = `${plural(probes.length, 'file')} matching the build`
    logger.info(
      `Live at ${url}: seen after ${describeTiming(seen)}, ${changed ? 'serving another build than before' : files}`,
    )
  }
  return seen
}

/** The record alone for a change, else the sample of the build's files, then its record. */
function probesFor(expected: Expected): Probe[] {
  const atRecord = (file: ProbedFile, compare: Probe['compare']): Probe => {
    const { path, size, sha256, contentType } = file
    return { urlPath: `/${RECORD_PATH}`, file: { path, size, sha256, contentType }, compare }
  }
  if ('otherThan' in expected)
    return [atRecord({ path: RECORD_PATH, size: 0, sha256: expected.otherThan.sha256 }, 'other')]
  const probes = sampleProbes(expected.files, expected.serving)
  if (expected.record) probes.push(atRecord(expected.record, 'content'))
  return probes
}
