// Files to their presigned requests, `concurrency` PUTs at a time (p-limit). The first part that
// fails for good stops the others: no new PUT starts, those in flight are aborted, and the upload is
// never completed.
import pLimit from 'p-limit'
import type { PresignedRequest } from '../../api/types.ts'
import { proveIntegrity, type Integrity, type IntegrityOptions } from './integrity.ts'
import { planParts, type BytesFile, type Part } from './parts.ts'
import { noProgress, type Progress } from './progress.ts'
import { putPart, type PutContext } from './put.ts'

export interface UploadOptions
  extends Omit<PutContext, 'progress' | 'signal' | 'running' | 'sent'>, Omit<IntegrityOptions, 'byFile'> {
  requests: readonly PresignedRequest[]
  concurrency: number
  /** Default: none said. */
  progress?: Progress
  signal?: AbortSignal
  /** A file made from the others' SHA-256 (the build's record): sent once they are all sent, not answered. */
  last?: { requests: readonly PresignedRequest[]; make: (sha256: string[]) => BytesFile }
}

export interface UploadResult {
  parts: number
  bytes: number
  retries: number
  durationMs: number
  /** Of each file's bytes as sent, by index. */
  sha256: string[]
}

export async function uploadFiles(options: UploadOptions): Promise<UploadResult> {
  options.signal?.throwIfAborted()
  const started = options.retry.now()
  const { parts, byFile } = planParts(options.files, options.requests)
  const integrity = proveIntegrity({ ...options, byFile })
  const halt = new AbortController()
  const signal = options.signal ? AbortSignal.any([options.signal, halt.signal]) : halt.signal
  const running = new Set<AbortController>()
  signal.addEventListener('abort', () => running.forEach((put) => put.abort(signal.reason)), { once: true })
  const context = { ...options, progress: options.progress ?? noProgress, signal, running }
  const limit = pLimit(Math.max(1, options.concurrency))
  let retries = 0
  let bytes = options.files.reduce((sum, f) => sum + f.size, 0)
  const store = (proof: Integrity) => {
    const put = { ...context, sent: proof.sent }
    return (part: Part) =>
      limit(async () => {
        const tried = await putPart(part, put) // not `retries += await`: others add meanwhile
        retries += tried
        await proof.stored(part)
      })
  }
  const sendLast = async ({ requests, make }: NonNullable<UploadOptions['last']>) => {
    const file = make(await integrity.proved(signal))
    const last = planParts([file], requests)
    parts.push(...last.parts)
    bytes += file.size
    await Promise.all(last.parts.map(store(proveIntegrity({ files: [file], byFile: last.byFile }))))
  }
  const tasks = parts.map(store(integrity))
  if (options.last) tasks.push(sendLast(options.last))
  try {
    await Promise.all(tasks)
  } catch (error) {
    halt.abort(error)
    await Promise.allSettled(tasks)
    throw options.signal?.aborted ? options.signal.reason : error
  } finally {
    // A 2xx answer's body still coming (a store trickling it) is cut: every part is stored or failed.
    halt.abort(new Error('the upload is over'))
  }
  return {
    parts: parts.length,
    bytes,
    retries,
    durationMs: options.retry.now() - started,
    // Every part stored: every file proved.
    sha256: await integrity.proved(signal),
  }
}
