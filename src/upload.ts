import { createHash, hash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import { Transform, pipeline, type Readable } from 'node:stream'
import { request, type Dispatcher } from 'undici'
import { isNetworkFailure, withRetries, type RetryPolicy } from './api/retry.ts'
import type { PresignedRequest } from './api/types.ts'
import { hashArtifacts, type ArtifactFile } from './artifacts.ts'
import type { Logger } from './logger.ts'
import { collectGarbageEvery } from './memory.ts'
import { forEachInPool } from './pool.ts'
import { createProgress, type Progress } from './progress.ts'

export interface UploadOptions {
  files: ArtifactFile[]
  requests: PresignedRequest[]
  /**
   * Fill in each file's SHA-256 during the upload: a file sent in one request is hashed from the
   * bytes sent (one read for both hashes); a file sent in parts, by a reader beside the upload.
   */
  hash: boolean
  dispatcher: Dispatcher
  concurrency: number
  retry: RetryPolicy
  /** A PUT that moves no byte and gets no answer for this long is aborted and retried. */
  requestTimeoutMs: number
  logger: Logger
  progressIntervalMs?: number
  /** When aborted: no new PUT starts, the PUTs in flight are aborted, and the upload rejects with its reason. */
  signal?: AbortSignal
}

export interface UploadResult {
  parts: number
  bytes: number
  retries: number
  durationMs: number
}

/** A part that could not be stored: names the file and part, never the URL (a credential). */
export class PartUploadError extends Error {
  override name = 'PartUploadError'
  readonly status: number | undefined
  readonly retryable: boolean
  constructor(message: string, status: number | undefined, retryable: boolean, options?: ErrorOptions) {
    super(message, options)
    this.status = status
    this.retryable = retryable
  }
}

interface Part {
  request: PresignedRequest
  file: ArtifactFile
  /** 1-based, within the file. */
  number: number
  of: number
}

const READ_BUFFER = 256 * 1024
/** Bytes streamed between young-generation collections (see memory.ts). */
const COLLECT_EVERY = 16 * 1024 * 1024
/** Parts up to this size are read whole; larger ones are streamed. */
const SMALL_PART = 1024 * 1024

/** Uploads every presigned part with bounded concurrency, then checks no file changed meanwhile. */
export async function uploadParts(options: UploadOptions): Promise<UploadResult> {
  const parts = planUpload(options.files, options.requests)
  const totalBytes = options.files.reduce((sum, f) => sum + f.size, 0)
  const started = options.retry.now()
  const progress = createProgress({
    files: options.files.length,
    bytes: totalBytes,
    partsPerFile: new Map(parts.map((p) => [p.file.path, p.of])),
    logger: options.logger,
    now: options.retry.now,
    intervalMs: options.progressIntervalMs ?? 5_000,
  })
  let retries = 0
  // With the signal, a retry's wait ends and no attempt starts once the run is cancelled.
  const retry = options.signal ? { ...options.retry, signal: options.signal } : options.retry
  const streamed = collectGarbageEvery(COLLECT_EVERY)
  const ordered = [...parts].sort((a, b) => b.request.content_length - a.request.content_length)
  const uploadOne = async (part: Part) => {
    await withRetries(
      describePart(part),
      () => putPart(part, options, progress, streamed),
      (error) => error instanceof PartUploadError && error.retryable,
      retry,
      options.logger,
      () => retries++,
    )
    progress.partDone(part.file.path)
  }
  // Files in parts are hashed in order by a reader of their own while their parts upload in any order.
  const hashedApart = options.hash ? [...new Set(parts.filter((p) => p.of > 1).map((p) => p.file))] : []
  try {
    await Promise.all([hashArtifacts(hashedApart, 2), forEachInPool(ordered, options.concurrency, uploadOne)])
  } finally {
    progress.stop()
  }
  await assertUnchanged(options.files)
  return {
    parts: parts.length,
    bytes: totalBytes,
    retries,
    durationMs: options.retry.now() - started,
  }
}

/** Pairs each presigned request with its file and checks it asks for a range the file has. */
export function planUpload(files: ArtifactFile[], requests: PresignedRequest[]): Part[] {
  const byPath = new Map(files.map((f) => [f.path, f]))
  const count = countBy(requests, (r) => r.path)
  const seen = new Map<string, number>()
  const covered = new Map<string, number>()
  const parts = requests.map((request) => {
    const file = byPath.get(request.path)
    if (!file) throw new Error(`The service asked for '${request.path}', which is not a file of this site`)
    if (request.byte_offset < 0 || request.byte_offset + request.content_length > file.size) {
      throw new Error(
        `The service asked for bytes ${request.byte_offset}+${request.content_length} of '${request.path}', which has ${file.size}`,
      )
    }
    const number = (seen.get(request.path) ?? 0) + 1
    seen.set(request.path, number)
    covered.set(request.path, (covered.get(request.path) ?? 0) + request.content_length)
    return { request, file, number, of: count.get(request.path) ?? 1 }
  })
  for (const file of files) {
    const bytes = covered.get(file.path) ?? 0
    if (bytes !== file.size) {
      throw new Error(
        `The service's upload requests for '${file.path}' cover ${bytes} of its ${file.size} bytes`,
      )
    }
  }
  return parts
}

function describePart(part: Part): string {
  return part.of === 1
    ? `Upload of ${part.file.path}`
    : `Upload of ${part.file.path} part ${part.number}/${part.of}`
}

async function putPart(
  part: Part,
  options: UploadOptions,
  progress: Progress,
  streamed: (bytes: number) => void,
): Promise<void> {
  const { byte_offset: offset, content_length: length } = part.request
  const abort = new AbortController()
  let sent = 0
  let watchdog: NodeJS.Timeout | undefined
  const stalled = () => {
    abort.abort(new PartUploadError(`no progress for ${options.requestTimeoutMs / 1000} s`, undefined, true))
  }
  const touch = () => {
    clearTimeout(watchdog)
    watchdog = setTimeout(stalled, options.requestTimeoutMs)
  }
  let body: Buffer | Readable
  let md5: () => string
  // A part that is the whole file gives the file's SHA-256 from the same bytes.
  let sha256: (() => string) | undefined
  const wholeFile = options.hash && part.of === 1
  if (length <= SMALL_PART) {
    // Most files of a web build are small: one read, one buffer, one hash call, and none of the
    // objects of a stream pipeline (thousands of those made the heap grow with the file count).
    const bytes = await readRange(part, offset, length)
    sent = length
    progress.addBytes(length)
    body = bytes
    md5 = () => hash('md5', bytes)
    if (wholeFile) sha256 = () => hash('sha256', bytes)
  } else {
    const hasher = createHash('md5')
    const fileHasher = wholeFile ? createHash('sha256') : undefined
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hasher.update(chunk)
        fileHasher?.update(chunk)
        streamed(chunk.length)
        sent += chunk.length
        progress.addBytes(chunk.length)
        touch()
        callback(null, chunk)
      },
    })
    // pipeline() destroys the file stream too when undici drops the body (abort, reset).
    body = pipeline(
      createReadStream(part.file.absolutePath, {
        start: offset,
        end: offset + length - 1,
        highWaterMark: Math.min(READ_BUFFER, length),
      }),
      counter,
      () => {},
    )
    md5 = () => hasher.digest('hex')
    if (fileHasher) sha256 = () => fileHasher.digest('hex')
  }
  const headers: Record<string, string> = { 'content-length': String(length) }
  if (part.file.contentType) headers['content-type'] = part.file.contentType

  const cancel = () => abort.abort(options.signal?.reason)
  options.signal?.addEventListener('abort', cancel, { once: true })
  if (options.signal?.aborted) cancel()
  touch()
  try {
    const response = await request(part.request.url, {
      method: 'PUT',
      headers,
      body,
      dispatcher: options.dispatcher,
      signal: abort.signal,
      headersTimeout: options.requestTimeoutMs,
      bodyTimeout: options.requestTimeoutMs,
    })
    const text = await response.body.text()
    const status = response.statusCode
    if (status < 200 || status >= 300) {
      const retryable = status >= 500 || status === 408 || status === 429
      throw new PartUploadError(
        `${describePart(part)}: the store answered ${status} ${storeError(text)}`,
        status,
        retryable,
      )
    }
    if (sent !== length) {
      throw new PartUploadError(`${describePart(part)}: sent ${sent} of ${length} bytes`, status, true)
    }
    const etag = response.headers.etag
    const expected = md5()
    if (
      typeof etag === 'string' &&
      /^"[0-9a-f]{32}"$/i.test(etag) &&
      etag.slice(1, -1).toLowerCase() !== expected
    ) {
      throw new PartUploadError(
        `${describePart(part)}: the store's ETag ${etag} is not the MD5 of the bytes sent ("${expected}")`,
        status,
        true,
      )
    }
    if (sha256) part.file.sha256 = sha256()
  } catch (error) {
    progress.addBytes(-sent)
    if (options.signal?.aborted) throw options.signal.reason
    if (error instanceof PartUploadError) throw error
    const reason: unknown = abort.signal.aborted ? abort.signal.reason : error
    const message = reason instanceof Error ? reason.message : String(reason)
    throw new PartUploadError(
      `${describePart(part)}: ${message}`,
      undefined,
      isNetworkFailure(error) || abort.signal.aborted,
      {
        cause: error,
      },
    )
  } finally {
    clearTimeout(watchdog)
    options.signal?.removeEventListener('abort', cancel)
  }
}

/** Bytes offset..offset+length of the part's file, read in one go (small parts only). */
async function readRange(part: Part, offset: number, length: number): Promise<Buffer> {
  const bytes = Buffer.allocUnsafe(length)
  const handle = await open(part.file.absolutePath, 'r')
  try {
    let done = 0
    while (done < length) {
      const { bytesRead } = await handle.read(bytes, done, length - done, offset + done)
      if (bytesRead === 0)
        throw new Error(
          `${part.file.path} changed while it was uploaded: it is shorter than when it was hashed`,
        )
      done += bytesRead
    }
    return bytes
  } finally {
    await handle.close()
  }
}

/** The code and message of an object store's XML error body, or the start of whatever it sent. */
function storeError(text: string): string {
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1]
  const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1]
  if (code) return message ? `${code}: ${message}` : code
  return text.trim().slice(0, 200)
}

/** A site is never completed with bytes that differ from the manifest. */
async function assertUnchanged(files: ArtifactFile[]): Promise<void> {
  await forEachInPool(files, 16, async (file) => {
    const now = await stat(file.absolutePath)
    if (now.size !== file.size || now.mtimeMs !== file.mtimeMs) {
      throw new Error(
        `${file.path} changed while it was uploaded (size ${file.size} -> ${now.size}); the upload was not completed`,
      )
    }
  })
}

function countBy<T>(items: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1)
  return counts
}
