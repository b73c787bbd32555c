// The upload of a site's parts to their presigned URLs. Its pieces, each a module of its own:
// upload/plan.ts pairs requests with files; upload/scheduler.ts starts parts under the adaptive limit;
// upload/send.ts sends one part (its body from upload/body.ts, its PUT from upload/put.ts) and says
// what came of it; upload/outcome.ts's table decides what follows; upload/watchdog.ts aborts the PUTs
// that stall; upload/run.ts ties them together for one upload.
import { hash } from 'node:crypto'
import type { Dispatcher } from 'undici'
import type { RetryPolicy } from '../api/retry.ts'
import type { PresignedRequestList } from '../api/presigned.ts'
import type { Timeouts } from '../common/timeouts.ts'
import { forEachLimited } from '../common/limit.ts'
import type { Logger } from '../common/logger.ts'
import type { Progress } from './progress.ts'
import { isScannedFile } from './files.ts'
import { lstatFile, type OpenFile } from './fd.ts'
import { assertUnchanged, isBytesFile, type UploadFile } from './upload/body.ts'
import { planUpload } from './upload/plan.ts'
import { UploadRun } from './upload/run.ts'

export { PartUploadError } from './upload/outcome.ts'
export { planUpload, type Part, type UploadPlan } from './upload/plan.ts'
export type { BytesFile, UploadFile } from './upload/body.ts'

export interface UploadOptions {
  /** The files the requests ask for: scanned ones, read from disk, or bytes held in memory. */
  files: readonly UploadFile[]
  /** The site's requests as the client gives them; a plain list is made into one. */
  requests: PresignedRequestList
  /**
   * Compute each file's SHA-256 during the upload (UploadResult.sha256): a file sent in one request
   * is hashed from the bytes sent (one read for both hashes); a file sent in parts, by a reader
   * beside the upload.
   */
  hash: boolean
  dispatcher: Dispatcher
  /**
   * PUTs in flight at most; fewer as the upload starts and while the store signals overload (see
   * AdaptiveConcurrency).
   */
  concurrency: number
  retry: RetryPolicy
  /**
   * The run's time limits: a PUT that moves no byte and gets no answer for stallMs is aborted and
   * retried; one that takes longer than putDeadlineMs in all, however it trickles, too. An answer's
   * body is waited for stallMs after its headers at most (a 2xx answer's not at all).
   */
  timeouts: Timeouts
  /** How long a straggler at the upload's end waits before it is sent again (default TAIL_STALL_MS). */
  tailStallMs?: number
  logger: Logger
  progressIntervalMs?: number
  /** The progress of a larger whole this upload is part of (a site's files, then its record): its owner stops it. */
  progress?: Progress
  /** When aborted: no new PUT starts, the PUTs in flight are aborted, and the upload rejects with its reason. */
  signal?: AbortSignal
  /** Opens the files (default fs.open): a test's may fail as a full descriptor table would. */
  open?: OpenFile
}

export interface UploadResult {
  parts: number
  bytes: number
  retries: number
  durationMs: number
  /** With `hash`: the SHA-256 (hex) of each file, by its index in UploadOptions.files. */
  sha256: string[] | undefined
}

/** Uploads every presigned part with bounded concurrency, then checks no file changed meanwhile. */
export async function uploadParts(options: UploadOptions): Promise<UploadResult> {
  options.signal?.throwIfAborted()
  const { requests } = options
  const plan = planUpload(options.files, requests)
  const started = options.retry.now()
  const run = new UploadRun(options, requests, plan)
  await run.sendAll()
  await checkUnrequested(options, plan.partCount, run.digests)
  return {
    parts: plan.parts.length,
    bytes: options.files.reduce((sum, f) => sum + f.size, 0),
    retries: run.retries,
    durationMs: options.retry.now() - started,
    sha256: options.hash ? run.digests : undefined,
  }
}

/**
 * Each part's file was checked as its bytes were read (see assertUnchanged); a file no request asked
 * for (an empty one: planUpload checked that requests cover every byte) is checked here, and given
 * the SHA-256 of no bytes.
 */
async function checkUnrequested(
  options: UploadOptions,
  partCount: number[],
  digests: string[],
): Promise<void> {
  const unrequested = partCount.flatMap((count, f) => (count === 0 ? [f] : []))
  await forEachLimited(unrequested, 16, async (f) => {
    const file = options.files[f]!
    if (!isBytesFile(file)) {
      const now = await lstatFile(file.absolutePath).catch((error: unknown) => {
        throw new Error(`${file.path} was removed after it was scanned`, { cause: error })
      })
      if (!isScannedFile(file, now)) {
        throw new Error(
          `${file.path} was replaced after it was scanned: another file or a link is at its path now`,
        )
      }
      assertUnchanged(file, now)
    }
    if (options.hash) digests[f] = hash('sha256', '')
  })
}
