import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { Transform, pipeline } from 'node:stream'
import pLimit from 'p-limit'
import { request, type Dispatcher } from 'undici'
import { isNetworkFailure, withRetries, type RetryPolicy } from './api/retry.ts'
import type { PresignedRequest } from './api/types.ts'
import type { ArtifactFile, Manifest } from './artifacts.ts'
import type { Logger } from './logger.ts'
import { createProgress, type Progress } from './progress.ts'

export interface UploadOptions {
  manifest: Manifest
  requests: PresignedRequest[]
  dispatcher: Dispatcher
  concurrency: number
  retry: RetryPolicy
  /** A PUT that moves no byte and gets no answer for this long is aborted and retried. */
  requestTimeoutMs: number
  logger: Logger
  progressIntervalMs?: number
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

const READ_BUFFER = 1024 * 1024

/** Uploads every presigned part with bounded concurrency, then checks no file changed meanwhile. */
export async function uploadParts(options: UploadOptions): Promise<UploadResult> {
  const parts = planUpload(options.manifest, options.requests)
  const started = options.retry.now()
  const progress = createProgress({
    files: options.manifest.fileCount,
    bytes: options.manifest.totalBytes,
    partsPerFile: countBy(parts, (p) => p.file.path),
    logger: options.logger,
    now: options.retry.now,
    intervalMs: options.progressIntervalMs ?? 5_000,
  })
  let retries = 0
  const limit = pLimit(options.concurrency)
  // Largest parts first, so that one big file does not become the long tail of the upload.
  const ordered = [...parts].sort((a, b) => b.request.content_length - a.request.content_length)
  try {
    await Promise.all(
      ordered.map((part) =>
        limit(async () => {
          await withRetries(
            describePart(part),
            () => putPart(part, options, progress),
            (error) => error instanceof PartUploadError && error.retryable,
            options.retry,
            options.logger,
            () => retries++,
          ).catch((error: unknown) => {
            limit.clearQueue()
            throw error
          })
          progress.partDone(part.file.path)
        }),
      ),
    )
  } finally {
    progress.stop()
  }
  await assertUnchanged(options.manifest.files)
  return {
    parts: parts.length,
    bytes: options.manifest.totalBytes,
    retries,
    durationMs: options.retry.now() - started,
  }
}

/** Pairs each presigned request with its file and checks it asks for a range the file has. */
export function planUpload(manifest: Manifest, requests: PresignedRequest[]): Part[] {
  const byPath = new Map(manifest.files.map((f) => [f.path, f]))
  const count = countBy(requests, (r) => r.path)
  const seen = new Map<string, number>()
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
    return { request, file, number, of: count.get(request.path) ?? 1 }
  })
  for (const file of manifest.files) {
    const covered = requests.filter((r) => r.path === file.path).reduce((sum, r) => sum + r.content_length, 0)
    if (covered !== file.size) {
      throw new Error(
        `The service's upload requests for '${file.path}' cover ${covered} of its ${file.size} bytes`,
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

async function putPart(part: Part, options: UploadOptions, progress: Progress): Promise<void> {
  const { byte_offset: offset, content_length: length } = part.request
  const md5 = createHash('md5')
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
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      md5.update(chunk)
      sent += chunk.length
      progress.addBytes(chunk.length)
      touch()
      callback(null, chunk)
    },
  })
  // pipeline() destroys the file stream too when undici drops the body (abort, reset).
  const body =
    length === 0
      ? Buffer.alloc(0)
      : pipeline(
          createReadStream(part.file.absolutePath, {
            start: offset,
            end: offset + length - 1,
            highWaterMark: Math.min(READ_BUFFER, length),
          }),
          counter,
          () => {},
        )
  const headers: Record<string, string> = { 'content-length': String(length) }
  if (part.file.contentType) headers['content-type'] = part.file.contentType

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
    const expected = md5.digest('hex')
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
  } catch (error) {
    progress.addBytes(-sent)
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
  const limit = pLimit(16)
  await Promise.all(
    files.map((file) =>
      limit(async () => {
        const now = await stat(file.absolutePath)
        if (now.size !== file.size || now.mtimeMs !== file.mtimeMs) {
          throw new Error(
            `${file.path} changed while it was uploaded (size ${file.size} -> ${now.size}); the upload was not completed`,
          )
        }
      }),
    ),
  )
}

function countBy<T>(items: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1)
  return counts
}
