// One part to its presigned URL: a plain PUT through undici's public API, its body the file's bytes
// (read whole when small, streamed when not) hashed as they are sent, its answer judged, and its
// failures retried by the one retry engine.
import { createHash, hash } from 'node:crypto'
import { Readable } from 'node:stream'
import type { Dispatcher } from 'undici'
import { errorMessage, retryVerdict } from '../../api/errors.ts'
import { networkReason } from '../../api/http.ts'
import type { Logger } from '../../common/logger.ts'
import { isNetworkFailure, isOutOfDescriptors, networkFailure } from '../../common/network.ts'
import { gaveUpNote, withRetries, type GaveUp, type RetryPolicy } from '../../common/retry.ts'
import { redact } from '../../common/secrets.ts'
import type { Timeouts } from '../../common/timeouts.ts'
import type { ArtifactFile } from '../collect/files.ts'
import { descriptorLimitRemedy, readScanned, streamScanned, type OpenFile } from '../collect/read.ts'
import { describePart, isBytesFile, type Part } from './parts.ts'
import type { Progress } from './progress.ts'

/** Read whole and sent as one buffer up to this size; streamed above. */
const SMALL_PART = 1024 * 1024
/** S3's XML errors are far smaller. */
const ERROR_BODY_LIMIT = 8 * 1024

type PartFailure = ErrorOptions & { retryable: boolean; status?: number; retryAfter?: string }

/** A part that could not be stored: names the file and part, never the URL (a credential). */
export class PartUploadError extends Error {
  override name = 'PartUploadError'
  readonly status: number | undefined
  readonly retryable: boolean
  /** The store's `retry-after`, when it asked for a wait. */
  readonly retryAfter: string | undefined
  constructor(message: string, failure: PartFailure) {
    super(message, failure)
    this.status = failure.status
    this.retryable = failure.retryable
    this.retryAfter = failure.retryAfter
  }

  /** Made again by the retry engine, saying how its retries stopped. */
  afterRetries(gaveUp: GaveUp): PartUploadError {
    const { status, retryable } = this
    return new PartUploadError(this.message + gaveUpNote(gaveUp), { status, retryable, cause: this })
  }
}

export interface PutContext {
  dispatcher: Dispatcher
  timeouts: Timeouts
  retry: RetryPolicy
  logger: Logger
  progress: Progress
  /** The upload's: aborted by the run, or once a part failed for good. */
  signal: AbortSignal
  // Each PUT's controller until its answer is drained, aborted with `signal` by one listener in all:
  // EventTarget's cost grows with its listeners.
  running: Set<AbortController>
  /** Every byte of the part was sent, hashed (integrity.ts): each attempt calls it, and it may refuse. */
  sent: (part: Part, sha256: string) => void
  open?: OpenFile
  // Starts a PUT's deadline in all (undici's timers end a store gone quiet, not one trickling bytes
  // forever), calling `expired` when it passes; returns its cancel. A test gives its own clock's.
  deadline?: (ms: number, expired: () => void) => () => void
}

const timerDeadline = (ms: number, expired: () => void) => {
  const timer = setTimeout(expired, ms)
  return () => clearTimeout(timer)
}

/** Puts the part until stored or given up on (its bytes as sent told to `sent`): the retries. */
export async function putPart(part: Part, context: PutContext): Promise<number> {
  let retries = 0
  await withRetries(
    describePart(part),
    (attempt) => {
      retries = attempt
      return putOnce(part, context)
    },
    // Only the store's and the wire's failures are retried; a file that changed is not.
    (error, now) => retryVerdict(error instanceof PartUploadError && error.retryable, error, now),
    { ...context.retry, signal: context.signal },
    context.logger,
  )
  context.progress.partDone(part.file.path, part.of)
  return retries
}

async function putOnce(part: Part, context: PutContext): Promise<void> {
  const { request, file } = part
  let body: Body | undefined
  const headers: Record<string, string> = { 'content-length': String(request.content_length) }
  if (file.contentType) headers['content-type'] = file.contentType
  const deadlineMs = context.timeouts.putDeadlineMs(request.content_length)
  // Aborted by the upload or the deadline; an AbortSignal.any of a timeout lived on until a collection.
  const controller = new AbortController()
  context.running.add(controller)
  let draining = false
  let expired = false
  const late = `not answered within its deadline of ${deadlineMs / 1000} s`
  const cancel = (context.deadline ?? timerDeadline)(deadlineMs, () => {
    expired = true
    controller.abort(new Error(late))
  })
  const { url } = request
  // The origin and the rest as they came, byte for byte as signed (a URL object may re-encode them).
  const slash = url.indexOf('/', url.indexOf('//') + 2)
  try {
    body = partBody(part, context)
    const answer = await context.dispatcher
      .request({
        origin: slash < 0 ? url : url.slice(0, slash),
        path: slash < 0 ? '/' : url.slice(slash),
        method: 'PUT',
        headers,
        body: body.body,
        signal: controller.signal,
        headersTimeout: context.timeouts.stallMs,
        bodyTimeout: context.timeouts.stallMs,
      })
      .catch((error: unknown) => {
        // The file, not the wire: it changed, or was replaced, while it was read.
        if (body!.readError) throw body!.readError as Error
        const what = expired ? late : networkReason(error, context.timeouts.stallMs)
        const retryable = expired || isNetworkFailure(error)
        throw new PartUploadError(`${describePart(part)}: ${what}`, { retryable, cause: error })
      })
    if (answer.statusCode < 200 || answer.statusCode >= 300) throw await refusal(part, answer)
    // Not waited for: drained to keep the connection, and cut when the upload ends (a store trickling it).
    draining = true
    answer.body
      .dump({ limit: 128 * 1024, signal: controller.signal })
      .catch(() => {})
      .finally(() => context.running.delete(controller))
    checkStored(part, answer, body)
  } catch (error) {
    // The attempt failed: the bytes it counted are taken back. Out of descriptors, its file's open is retried.
    body?.failed()
    throw descriptorFailure(part, error) ?? error
  } finally {
    cancel()
    if (!draining) context.running.delete(controller)
  }
}

interface Body {
  body: Buffer | Readable
  /** Why the file's bytes stopped coming, when they did. */
  readError?: unknown
  /** Of the bytes as sent, once every byte was (the store's ETag is checked against it). */
  md5(): string | undefined
  failed(): void
}

/** Out of descriptors, as the open of a part read whole or streamed meets it: retried. */
function descriptorFailure(part: Part, error: unknown): PartUploadError | undefined {
  if (!isOutOfDescriptors(error)) return undefined
  const why = `out of file descriptors (${networkFailure(error)?.code}): ${descriptorLimitRemedy()}`
  return new PartUploadError(`${describePart(part)}: ${why}`, { retryable: true, cause: error })
}

function partBody(part: Part, { open, progress, sent }: PutContext): Body {
  const { file, request } = part
  const { byte_offset: offset, content_length: length } = request
  if (isBytesFile(file) || length <= SMALL_PART) {
    const bytes = isBytesFile(file)
      ? file.bytes.subarray(offset, offset + length)
      : readScanned(file, offset, length, open)
    const md5 = hash('md5', bytes)
    sent(part, hash('sha256', bytes))
    progress.addBytes(bytes.length)
    return { body: bytes, md5: () => md5, failed: () => progress.addBytes(-bytes.length) }
  }
  const md5 = createHash('md5')
  const sha256 = createHash('sha256')
  let counted = 0
  let md5sum: string | undefined
  const stream = Readable.from(chunks(file))
  const body: Body = {
    body: stream,
    // Read to its end by the request, not only read ahead from the file.
    md5: () => (stream.readableEnded ? md5sum : undefined),
    failed: () => progress.addBytes(-counted),
  }
  async function* chunks(scanned: ArtifactFile) {
    try {
      for await (const chunk of streamScanned(scanned, offset, length, open)) {
        md5.update(chunk)
        sha256.update(chunk)
        counted += chunk.length
        progress.addBytes(chunk.length)
        yield chunk
      }
      md5sum = md5.digest('hex')
      sent(part, sha256.digest('hex'))
    } catch (error) {
      body.readError = error
      throw error
    }
  }
  return body
}

/** The store's refusal: retried when it may pass (5xx, 408, 429), after its `retry-after`. */
async function refusal(part: Part, answer: Dispatcher.ResponseData): Promise<PartUploadError> {
  const { statusCode: status, headers } = answer
  const text = await errorText(answer)
  const retryAfter = headers['retry-after']
  return new PartUploadError(`${describePart(part)}: the store answered ${status} ${text}`, {
    status,
    retryable: status >= 500 || status === 408 || status === 429,
    retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
  })
}

/** A 2xx stored the part once every byte was sent, and when its ETag, an MD5, is the bytes sent's. */
function checkStored(part: Part, { statusCode: status, headers }: Dispatcher.ResponseData, body: Body): void {
  const md5 = body.md5()
  const etag = /^"([0-9a-f]{32})"$/i.exec(String(headers.etag))?.[1]
  const refused = (why: string) =>
    new PartUploadError(`${describePart(part)}: ${why}`, { status, retryable: true })
  if (!md5) throw refused(`the store answered ${status} before every byte was sent`)
  if (etag && etag.toLowerCase() !== md5)
    throw refused(`the store's ETag "${etag}" is not the MD5 of the bytes sent ("${md5}")`)
}

async function errorText(answer: Dispatcher.ResponseData): Promise<string> {
  let text = ''
  try {
    for await (const chunk of answer.body as AsyncIterable<Buffer>) {
      text += chunk.toString('utf8')
      if (text.length >= ERROR_BODY_LIMIT) break
    }
  } catch (error) {
    text ||= `(its body was cut short: ${errorMessage(error)})`
  }
  answer.body.destroy()
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1]
  const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1]
  if (code) return message ? `${code}: ${message}` : code
  // Cut after the secrets are redacted: a cut secret is one the redactor no longer knows.
  return redact(text).trim().slice(0, 200)
}
