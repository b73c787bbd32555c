// The deploy's record on the site: a small JSON file at /.well-known/gamehost.json that says which
// build the site is (the commit, the ref, the digest, each file's path, size and SHA-256). It is what
// lets a later run see in one fetch which build a namespace serves: seen-live, the guard against an
// older build (older.ts) and the size comparison (sizes.ts), with no storage of ours.
//
// It describes the user's build: its digest and files are the manifest's, which leaves the record out
// (the `digest`, `file-count` and `total-bytes` outputs are the build's, as without a record).

import { createHash } from 'node:crypto'
import { request, type Dispatcher } from 'undici'
import { UsageError } from '../api/errors.ts'
import { Input } from '../inputs/constants.ts'
import type { ArtifactFile, Manifest } from './files.ts'
import type { BytesFile } from './upload.ts'
import { inputAssignment, inputName } from '../common/input-naming.ts'

/** The record's path on the site (no leading slash, as the site's files are named). */
export const RECORD_PATH = '.well-known/gamehost.json'
export const RECORD_FORMAT = 1
const RECORD_CONTENT_TYPE = 'application/json; charset=utf-8'
/** A served record larger than this is not read (a site of the service's largest holds far less). */
const RECORD_MAX_BYTES = 64 * 1024 * 1024

/** Where the build came from: the commit and ref the run built. */
export interface BuildSource {
  commit?: string
  ref?: string
}

export interface RecordedFile {
  path: string
  size: number
  sha256: string
}

/** The record as it is served. */
export interface SiteRecord {
  format: number
  commit?: string
  ref?: string
  digest: string
  fileCount: number
  totalBytes: number
  files: RecordedFile[]
}

/** The record's file: its bytes, and the SHA-256 they have (what seen-live compares). */
export interface RecordFile extends BytesFile {
  sha256: string
}

const ZERO_SHA256 = '0'.repeat(64)

/**
 * The record's bytes. Each file's line, the digest and the counts are written from the same
 * template as recordSize measures: every SHA-256 is 64 hex digits, so the size is known before any
 * file is hashed.
 */
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

/**
 * The size the record of these files will have, before they are hashed: the site is created with
 * every file's size, the record's too, and the files are hashed while they upload.
 */
export function recordSize(files: readonly ArtifactFile[], source: BuildSource): number {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  return Buffer.byteLength(recordText(sorted, `sha256:${ZERO_SHA256}`, source))
}

/** The record of the manifest's build, as the file the site carries. */
export function recordFile(manifest: Manifest, source: BuildSource): RecordFile {
  const bytes = Buffer.from(recordText(manifest.files, manifest.digest, source))
  return {
    path: RECORD_PATH,
    size: bytes.length,
    contentType: RECORD_CONTENT_TYPE,
    bytes,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  }
}

/** What the site is created with for the record: its path, size and type. */
export function recordDescriptor(size: number): { path: string; size: number; contentType: string } {
  return { path: RECORD_PATH, size, contentType: RECORD_CONTENT_TYPE }
}

/** The user's build may not hold a file at the record's path while the deploy writes one there. */
export function checkRecordPathFree(files: readonly ArtifactFile[]): void {
  if (files.some((file) => file.path === RECORD_PATH)) {
    throw new UsageError(
      `${inputName(Input.Path)} holds ${RECORD_PATH}, where the deploy writes its record of the build: remove it, ` +
        `or set ${inputAssignment(Input.SiteRecord, 'false')}`,
    )
  }
}

/** The record in `text`, or why it is not one. */
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
  const fileOk = (f: unknown) => {
    const file = f as Partial<RecordedFile> | null
    return (
      typeof file === 'object' &&
      file !== null &&
      typeof file.path === 'string' &&
      typeof file.sha256 === 'string' &&
      Number.isSafeInteger(file.size) &&
      file.size! >= 0
    )
  }
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

/**
 * Where a request for a path of the host of `url` goes: a host under `localhost` (the emulator's
 * CDN) is reached at 127.0.0.1 with its name in the Host header, as a browser resolves it.
 */
export function hostRequest(
  url: string,
  authorization?: string,
): { origin: string; base: string; headers: Record<string, string> } {
  const target = new URL(url)
  const local = target.hostname === 'localhost' || target.hostname.endsWith('.localhost')
  const origin = local
    ? `${target.protocol}//127.0.0.1${target.port ? `:${target.port}` : ''}`
    : target.origin
  const headers: Record<string, string> = { 'accept-encoding': 'identity' }
  if (local) headers.host = target.host
  if (authorization) headers.authorization = authorization
  return { origin, base: target.pathname.replace(/\/$/, ''), headers }
}

export interface ServedRecordOptions {
  dispatcher: Dispatcher
  signal: AbortSignal
  /** A request with no answer, or no further bytes of one, for this long fails. */
  stallMs: number
}

/**
 * The record the host of `url` serves, or why there is none to compare with (it answered 404, it
 * could not be reached, it is not a record): reading it never fails the deploy.
 */
export async function readServedRecord(
  url: string,
  options: ServedRecordOptions,
): Promise<{ record: SiteRecord } | { absent: string }> {
  const { origin, base, headers } = hostRequest(url)
  try {
    const answer = await request(`${origin}${base}/${RECORD_PATH}`, {
      dispatcher: options.dispatcher,
      headers,
      signal: options.signal,
      headersTimeout: options.stallMs,
      bodyTimeout: options.stallMs,
    })
    if (answer.statusCode !== 200) {
      await answer.body.dump()
      return { absent: `it answered ${answer.statusCode}` }
    }
    const chunks: Buffer[] = []
    let bytes = 0
    for await (const chunk of answer.body as AsyncIterable<Buffer>) {
      bytes += chunk.length
      if (bytes > RECORD_MAX_BYTES) return { absent: `it is larger than ${RECORD_MAX_BYTES} bytes` }
      chunks.push(chunk)
    }
    const parsed = parseRecord(Buffer.concat(chunks).toString('utf8'))
    return typeof parsed === 'string' ? { absent: `it is not a record: ${parsed}` } : { record: parsed }
  } catch (error) {
    options.signal.throwIfAborted()
    return { absent: `it could not be fetched: ${error instanceof Error ? error.message : String(error)}` }
  }
}
