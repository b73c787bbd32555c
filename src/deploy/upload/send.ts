// One attempt at one part: its body read, its PUT sent, and what came of it as an Outcome.
import type { Dispatcher } from 'undici'
import { isNetworkFailure } from '../../api/retry.ts'
import type { PresignedRequestList } from '../../api/presigned.ts'
import type { Timeouts } from '../../common/timeouts.ts'
import { isOutOfDescriptors } from '../fd.ts'
import type { Progress } from '../progress.ts'
import { openBody, type BodyOptions, type PartBody } from './body.ts'
import { PartUploadError, type Outcome } from './outcome.ts'
import { describePart, type Part } from './plan.ts'
import { dispatchPut, type StoreAnswer } from './put.ts'
import { StalledError, TailStallError, type InFlightPuts } from './watchdog.ts'
import { redact } from '../../common/secrets.ts'

/** What every attempt at a part shares. */
export interface SendContext {
  requests: PresignedRequestList
  dispatcher: Dispatcher
  timeouts: Timeouts
  inFlight: InFlightPuts
  progress: Progress
  body: BodyOptions
  /** The SHA-256 of each file sent whole, by its index, when hashing. */
  digests: string[]
  /** The upload failed or was cancelled: nothing more is sent. */
  halted: AbortSignal
}

/** Sends the part once; `restartable`: it may be sent again as a straggler (see TAIL_STALL_MS). */
export async function sendPart(part: Part, context: SendContext, restartable: boolean): Promise<Outcome> {
  const { requests, progress } = context
  const length = requests.contentLength(part.index)
  let body: PartBody
  try {
    body = await openBody(part, requests.byteOffset(part.index), length, context.body)
  } catch (error) {
    return unopened(error)
  }
  const headers: Record<string, string> = { 'content-length': String(length) }
  if (part.file.contentType) headers['content-type'] = part.file.contentType
  let sent = 0
  let outcome: Outcome
  try {
    // The upload failed or was cancelled while this part's bytes were read: nothing more is sent.
    context.halted.throwIfAborted()
    const answer = await dispatchPut({
      dispatcher: context.dispatcher,
      url: requests.url(part.index),
      headers,
      body: body.body,
      inFlight: context.inFlight,
      deadlineMs: context.timeouts.putDeadlineMs(length),
      restartable,
      onSent: (chunk) => {
        body.sent(chunk)
        sent += chunk.length
        progress.addBytes(chunk.length)
      },
    })
    outcome = judgeAnswer(part, answer, sent === length ? undefined : `sent ${sent} of ${length} bytes`, body)
  } catch (error) {
    outcome = judgeError(part, error, context.halted)
  }
  const stored = outcome.kind === 'stored'
  if (!stored) progress.addBytes(-sent)
  try {
    await body.end(stored)
  } catch (error) {
    return { kind: 'fatal', error: error instanceof Error ? error : new Error(String(error)) }
  }
  const sha256 = stored ? body.sha256() : undefined
  if (sha256) context.digests[part.fileIndex] = sha256
  return outcome
}

/** The file could not be opened or read: out of descriptors waits; anything else (it changed) is fatal, as it is. */
function unopened(error: unknown): Outcome {
  if (isOutOfDescriptors(error)) {
    const code = (error as { code?: unknown }).code === 'ENFILE' ? 'ENFILE' : 'EMFILE'
    return { kind: 'out-of-descriptors', code, cause: error }
  }
  return { kind: 'fatal', error: error instanceof Error ? error : new Error(String(error)) }
}

/** The store's answer: stored when 2xx, every byte sent and the ETag the MD5 of the bytes sent. */
function judgeAnswer(part: Part, answer: StoreAnswer, short: string | undefined, body: PartBody): Outcome {
  const { status } = answer
  if (status < 200 || status >= 300) {
    const failure = { detail: `the store answered ${status} ${storeError(answer.text)}`, status }
    if (status === 503 || status === 429) return { kind: 'overload', signal: String(status), failure }
    if (status >= 500 || status === 408) return { kind: 'retryable', failure }
    return {
      kind: 'fatal',
      error: new PartUploadError(`${describePart(part)}: ${failure.detail}`, status, false),
    }
  }
  if (short) return { kind: 'retryable', failure: { detail: short, status } }
  const { etag } = answer
  const expected = body.md5()
  if (etag !== undefined && /^"[0-9a-f]{32}"$/i.test(etag) && etag.slice(1, -1).toLowerCase() !== expected) {
    const detail = `the store's ETag ${etag} is not the MD5 of the bytes sent ("${expected}")`
    return { kind: 'retryable', failure: { detail, status } }
  }
  return { kind: 'stored' }
}

/** The PUT failed without an answer: aborted by the watchdog, or the network's doing, or neither. */
function judgeError(part: Part, error: unknown, halted: AbortSignal): Outcome {
  if (halted.aborted) return { kind: 'fatal', error: halted.reason as Error }
  if (error instanceof TailStallError) return { kind: 'restart', quiet: error.message }
  const detail = error instanceof Error ? error.message : String(error)
  if (error instanceof StalledError)
    return { kind: 'retryable', failure: { detail, status: undefined, cause: error } }
  const failure = { detail, status: undefined, cause: error }
  if (isNetworkFailure(error)) return { kind: 'overload', signal: 'connection lost', failure }
  return {
    kind: 'fatal',
    error: new PartUploadError(`${describePart(part)}: ${detail}`, undefined, false, { cause: error }),
  }
}

/** The code and message of an object store's XML error body, or the start of whatever it sent. */
function storeError(text: string): string {
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1]
  const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1]
  if (code) return message ? `${code}: ${message}` : code
  // Cut after the secrets are redacted: a cut secret is one the redactor no longer knows.
  return redact(text).trim().slice(0, 200)
}
