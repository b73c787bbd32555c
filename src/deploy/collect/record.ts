// The deploy's record on the site (/.well-known/gamehost.json: commit, ref, digest, each file's path,
// size and SHA-256) lets a later run see in one fetch which build a namespace serves. It describes the
// user's build: the manifest and the outputs leave the record out.

import { messageOf } from '../../common/format.ts'
import { hash } from 'node:crypto'
import { request, type Dispatcher } from 'undici'
import { UsageError } from '../../api/errors.ts'
import { Input } from '../../inputs/constants.ts'
import type { ArtifactFile, Manifest } from './files.ts'
import { inputAssignment, inputName } from '../../common/input-naming.ts'

export const RECORD_PATH = '.well-known/gamehost.json'
const RECORD_FORMAT = 1
const RECORD_CONTENT_TYPE = 'application/json; charset=utf-8'
/** A site of the service's largest has a far smaller record. */
export const RECORD_MAX_BYTES = 64 * 1024 * 1024

export interface BuildSource {
  commit?: string
  ref?: string
}

export interface RecordedFile {
  path: string
  size: number
  sha256: string
}

export interface SiteRecord {
  format: number
  commit?: string
  ref?: string
  digest: string
  fileCount: number
  totalBytes: number
  files: RecordedFile[]
}

/** The record as a file to upload: sent from memory. */
export interface RecordFile {
  path: string
  size: number
  contentType: string
  bytes: Buffer
  sha256: string
}

const ZERO_SHA256 = '0'.repeat(64)

/** Every SHA-256 is 64 hex digits: recordSize knows the size before any file is hashed. */
function recordText(
  files: ReadonlyArray<Pick<RecordedFile, 'path' | 'size'> & { sha256?: string }>,
  digest: string,
  source: BuildSource,
): string {
  const head = JSON.stringify({
    format: RECORD_FORMAT,
    commit: source.commit ?? null,
    ref: source.ref ?? null,
    digest,
    fileCount: files.length,
    totalBytes: files.reduce((sum, f) => sum + f.size, 0),
  })
  const lines = files.map((f) =>
    JSON.stringify({ path: f.path, size: f.size, sha256: f.sha256 ?? ZERO_SHA256 }),
  )
  return `${head.slice(0, -1)},"files":[\n${lines.join(',\n')}\n]}\n`
}

/** The files' order changes none of their lines: they are sized as they are. */
export function recordSize(files: readonly ArtifactFile[], source: BuildSource): number {
  return Buffer.byteLength(recordText(files, `sha256:${ZERO_SHA256}`, source))
}

export function recordFile(manifest: Manifest, source: BuildSource): RecordFile {
  const bytes = Buffer.from(recordText(manifest.files, manifest.digest, source))
  return { ...recordDescriptor(bytes.length), bytes, sha256: hash('sha256', bytes) }
}

export function recordDescriptor(size: number): { path: string; size: number; contentType: string } {
  return { path: RECORD_PATH, size, contentType: RECORD_CONTENT_TYPE }
}

export function checkRecordPathFree(files: readonly ArtifactFile[]): void {
  if (files.some((file) => file.path === RECORD_PATH)) {
    throw new UsageError(
      `${inputName(Input.Path)} holds ${RECORD_PATH}, where the deploy writes its record of the build: remove it, ` +
        `or set ${inputAssignment(Input.SiteRecord, 'false')}`,
    )
  }
}

/** The record, or why it is not one. */
export function parseRecord(text: string): SiteRecord | string {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return 'it is not JSON'
  }
  const record = value as Partial<SiteRecord> | null
  if (typeof record !== 'object' || record === null) return 'it is not an object'
  if (record.format !== RECORD_FORMAT) return `its format is ${String(record.format)}, not ${RECORD_FORMAT}`
  if (typeof record.digest !== 'string') return 'it has no digest'
  if (!Array.isArray(record.files)) return 'it has no files'
  const fileOk = (file: Partial<RecordedFile> | null) =>
    typeof file?.path === 'string' &&
    typeof file.sha256 === 'string' &&
    Number.isSafeInteger(file.size) &&
    file.size! >= 0
  if (!record.files.every(fileOk)) return 'a file of it has no path, size or SHA-256'
  const files = record.files
  return {
    format: record.format,
    commit: typeof record.commit === 'string' ? record.commit : undefined,
    ref: typeof record.ref === 'string' ? record.ref : undefined,
    digest: record.digest,
    fileCount: files.length,
    totalBytes: files.reduce((sum, f) => sum + f.size, 0),
    files: files.map(({ path, size, sha256 }) => ({ path, size, sha256 })),
  }
}

export interface HostOptions {
  dispatcher: Dispatcher
  signal: AbortSignal
  /** A request with no answer, or no further bytes of one, for this long fails. */
  stallMs: number
  authorization?: string
}

export function hostOptionsOf(
  run: { dispatcher: Dispatcher; signal: AbortSignal; timeouts: { stallMs: number } },
  authorization?: string,
): HostOptions {
  return { dispatcher: run.dispatcher, signal: run.signal, stallMs: run.timeouts.stallMs, authorization }
}

/**
 * A request for `urlPath` (encoded) of the host of `url`, bytes as sent (no decompression). A host
 * under `localhost` (the emulator's CDN) is reached at 127.0.0.1 with its name in the Host header.
 */
export function hostGet(url: string, urlPath: string, options: HostOptions, method: 'GET' | 'HEAD' = 'GET') {
  const target = new URL(url)
  const local = target.hostname === 'localhost' || target.hostname.endsWith('.localhost')
  const origin = local
    ? `${target.protocol}//127.0.0.1${target.port ? `:${target.port}` : ''}`
    : target.origin
  const headers: Record<string, string> = { 'accept-encoding': 'identity' }
  if (local) headers.host = target.host
  if (options.authorization) headers.authorization = options.authorization
  return request(`${origin}${target.pathname.replace(/\/$/, '')}${urlPath}`, {
    dispatcher: options.dispatcher,
    method,
    headers,
    signal: options.signal,
    headersTimeout: options.stallMs,
    bodyTimeout: options.stallMs,
  })
}

/** The record the host serves, or why there is none: reading it never fails the deploy. */
export async function readServedRecord(
  url: string,
  options: HostOptions,
): Promise<ServedRecord | { absent: string }> {
  try {
    const answer = await hostGet(url, `/${RECORD_PATH}`, options)
    if (answer.statusCode !== 200) {
      await answer.body.dump()
      return { absent: `it answered ${answer.statusCode}` }
    }
    const read = await readRecordBody(answer.body as AsyncIterable<Buffer>)
    return 'notRecord' in read ? { absent: `it ${read.notRecord}` } : read
  } catch (error) {
    options.signal.throwIfAborted()
    return { absent: `it could not be fetched: ${messageOf(error)}` }
  }
}

export interface ServedRecord {
  record: SiteRecord
  bytes: { size: number; sha256: string }
}

/** Up to RECORD_MAX_BYTES: the record and its bytes' digest, or why the body is none. */
export async function readRecordBody(
  body: AsyncIterable<Buffer>,
): Promise<ServedRecord | { notRecord: string }> {
  const chunks: Buffer[] = []
  let bytes = 0
  for await (const chunk of body) {
    bytes += chunk.length
    if (bytes > RECORD_MAX_BYTES) return { notRecord: `is larger than ${RECORD_MAX_BYTES} bytes` }
    chunks.push(chunk)
  }
  const text = Buffer.concat(chunks)
  const parsed = parseRecord(text.toString('utf8'))
  if (typeof parsed === 'string') return { notRecord: `is not a record: ${parsed}` }
  return { record: parsed, bytes: { size: text.length, sha256: hash('sha256', text) } }
}
