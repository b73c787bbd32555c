// One attempt at one part: its body read, its PUT sent, and what came of it as an Outcome.
import type { Dispatcher } from 'undici'
import { isNetworkFailure, isOutOfDescriptors } from '../../common/network.ts'
import type { PresignedRequestList } from '../../api/presigned.ts'
import type { Timeouts } from '../../common/timeouts.ts'
import type { Progress } from '../progress.ts'
import type { OpenFile } from '../fd.ts'
import { openBody, type PartBody } from './body.ts'
import type { Integrity } from './integrity.ts'
import { PartUploadError, type Outcome } from './outcome.ts'
import { describePart, type Part } from './plan.ts'
import { dispatchPut, type StoreAnswer } from './put.ts'
import { StalledError, TailStallError, type InFlightPuts } from './watchdog.ts'
import { redact } from '../../common/secrets.ts'

export interface SendContext {
  requests: PresignedRequestList
  dispatcher: Dispatcher
  timeouts: Timeouts
  inFlight: InFlightPuts
  progress: Progress
  open?: OpenFile
  /** Buffers earlier PUTs sent, for small parts (body.ts). */
  buffers: Buffer[]
  integrity: Integrity
  halted: AbortSignal
}

/** `restartable`: it may be sent again as a straggler. */
export async function sendPart(part: Part, context: SendContext, restartable: boolean): Promise<Outcome> {
  const { requests, progress } = context
  const length = requests.contentLength(part.index)
  let body: PartBody
  try {
    body = await openBody(part, requests.byteOffset(part.index), length, context.open, context.buffers)
  } catch (error) {
    return unopened(error)
  }
  const headers: Record<string, string> = { 'content-length': String(length) }
  if (part.file.contentType) headers['content-type'] = part.file.contentType
  let sent = 0
  let outcome: Outcome
  try {
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
    if (stored) context.integrity.stored(part, body.digests())
  } catch (error) {
    return fatal(error)
  }
  return outcome
}

const fatal = (error: unknown): Outcome => ({
  kind: 'fatal',
  error: error instanceof Error ? error : new Error(String(error)),
})

/** Out of descriptors waits; anything else (it changed) is fatal. */
function unopened(error: unknown): Outcome {
  if (isOutOfDescriptors(error)) {
    const code = (error as { code?: unknown }).code === 'ENFILE' ? 'ENFILE' : 'EMFILE'
    return { kind: 'out-of-descriptors', code, cause: error }
  }
  return fatal(error)
}

/** Stored when 2xx, every byte sent and the ETag the MD5 of the bytes sent. */
function judgeAnswer(part: Part, answer: StoreAnswer, short: string | undefined, body: PartBody): Outcome {
  const { status } = answer
  if (status < 200 || status >= 300) {
    const failure = { detail: `the store answered ${status} ${storeError(answer.text)}`, status }
    if (status === 503 || status === 429) return { kind: 'overload', signal: String(status), failure }
    if (status >= 500 || status === 408) return { kind: 'retryable', failure }
    return fatal(new PartUploadError(`${describePart(part)}: ${failure.detail}`, status, false))
  }
  if (short) return { kind: 'retryable', failure: { detail: short, status } }
  const { etag } = answer
  const expected = body.digests().md5
  if (etag !== undefined && /^"[0-9a-f]{32}"$/i.test(etag) && etag.slice(1, -1).toLowerCase() !== expected) {
    const detail = `the store's ETag ${etag} is not the MD5 of the bytes sent ("${expected}")`
    return { kind: 'retryable', failure: { detail, status } }
  }
  return { kind: 'stored' }
}

function judgeError(part: Part, error: unknown, halted: AbortSignal): Outcome {
  if (halted.aborted) return { kind: 'fatal', error: halted.reason as Error }
  if (error instanceof TailStallError) return { kind: 'restart', quiet: error.message }
  const detail = error instanceof Error ? error.message : String(error)
  const failure = { detail, status: undefined, cause: error }
  if (error instanceof StalledError) return { kind: 'retryable', failure }
  if (isNetworkFailure(error)) return { kind: 'overload', signal: 'connection lost', failure }
  return fatal(new PartUploadError(`${describePart(part)}: ${detail}`, undefined, false, { cause: error }))
}

function storeError(text: string): string {
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1]
  const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1]
  if (code) return message ? `${code}: ${message}` : code
  // Cut after the secrets are redacted: a cut secret is one the redactor no longer knows.
  return redact(text).trim().slice(0, 200)
}
