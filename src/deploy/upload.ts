import { createHash, hash, type Hash } from 'node:crypto'
import { fstatSync, type Stats } from 'node:fs'
import pLimit from 'p-limit'
import type { Dispatcher } from 'undici'
import { AdaptiveConcurrency } from './adaptive.ts'
import { errorCodes, isNetworkFailure, withRetries, type RetryHooks, type RetryPolicy } from '../api/retry.ts'
import { PresignedRequestList } from '../api/presigned.ts'
import type { PresignedRequest } from '../api/types.ts'
import { hashArtifacts, isScannedFile, openScanned, type ArtifactFile } from './files.ts'
import { soonestExpiringOrder } from '../api/expiry.ts'
import { closeFile, isOutOfDescriptors, lstatFile, readAt, type OpenFile } from './fd.ts'
import { forEachLimited } from '../common/limit.ts'
import type { Logger } from '../common/logger.ts'
import { createProgress, type Progress } from './progress.ts'

export interface UploadOptions {
  files: ArtifactFile[]
  /** The site's requests as the client gives them; a plain list is made into one. */
  requests: PresignedRequestList | readonly PresignedRequest[]
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
   * A PUT that moves no byte and gets no answer for this long is aborted and retried; one that takes
   * longer than its deadline in all (putDeadlineMs), however it trickles, too. An answer's body is
   * waited for this long after its headers at most (a 2xx answer's not at all).
   */
  requestTimeoutMs: number
  /** How long a straggler at the upload's end waits before it is sent again (default TAIL_STALL_MS). */
  tailStallMs?: number
  logger: Logger
  progressIntervalMs?: number
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

/** A part that could not be stored: names the file and part, never the URL (a credential). */
export class PartUploadError extends Error {
  override name = 'PartUploadError'
  readonly status: number | undefined
  readonly retryable: boolean
  /** Other PUTs were stored while this one was tried: the store is up (see the upload's retry hooks). */
  storedMeanwhile = false
  constructor(message: string, status: number | undefined, retryable: boolean, options?: ErrorOptions) {
    super(message, options)
    this.status = status
    this.retryable = retryable
  }
}

/** Why the stall sweep aborted a PUT (no progress, or past its deadline): retried like a lost connection. */
class StalledError extends Error {
  override name = 'StalledError'
}

/** Why the stall sweep aborted a straggler at the upload's end (see TAIL_STALL_MS): sent again at once. */
class TailStallError extends Error {
  override name = 'TailStallError'
}

/**
 * Once every part has started, a PUT with no progress for this long, and for 4 times the longest any
 * PUT went without progress before it came (InFlightPuts.longestQuiet: a slow link's long pauses
 * between chunks, a slow store's answers), is a straggler the whole upload waits for: it is aborted
 * and sent again at once, without a retry's wait, once per part (a second stall waits request-timeout
 * as any PUT does). Before that, a stalled PUT holds one of many places in flight; at the end it
 * holds the run.
 */
const TAIL_STALL_MS = 1_000

/**
 * How long a PUT of `length` bytes may take in all, from its dispatch to its answer's headers, however
 * its progress comes (each chunk re-arms the stall timer, not this): 4 × request-timeout, plus
 * request-timeout for every 256 KiB. At the default 30 s: 2 minutes for a small file, 2.5 for 1 MiB,
 * 3.4 hours for 100 MiB. A PUT past it is aborted and retried.
 *
 * The pace is the one the stall timer already asks of a streamed part (one READ_BUFFER chunk of
 * 256 KiB written per request-timeout; a small part must arrive whole within one), so a PUT whose
 * bytes move steadily enough for the stall timer always ends within its deadline: the deadline cuts
 * only what the stall timer cannot see, progress that keeps coming and never ends.
 */
export function putDeadlineMs(length: number, requestTimeoutMs: number): number {
  return Math.ceil(requestTimeoutMs * (4 + length / READ_BUFFER))
}

/** Waits after EMFILE / ENFILE before the part opens its file again: 50 ms, doubling, at most 2 s. */
const DESCRIPTOR_WAITS = 10
const descriptorWait = (wait: number) => Math.min(2_000, 50 * 2 ** wait)

interface Part {
  /** Its request's index in the site's PresignedRequestList. */
  index: number
  file: ArtifactFile
  /** The file's index in UploadOptions.files. */
  fileIndex: number
  /** 1-based, within the file. */
  number: number
  of: number
}

/** A PUT on the wire: what the stall sweep and cancellation need to reach it. */
interface InFlight {
  lastProgress: number
  /** A straggler at the upload's end may be sent again once (TAIL_STALL_MS): not sent again yet. */
  restartable: boolean
  /** performance.now() past which it is aborted, progress or not (putDeadlineMs). */
  deadline: number
  /** Its deadline, in ms from its start. */
  limit: number
  /** Its answer's headers arrived: only the body is left, whose bytes are no progress. */
  answered: boolean
  abort: (reason: Error) => void
  /** Its index in InFlightPuts. */
  slot: number
}

/**
 * The PUTs on the wire, in an array with swap-remove rather than a Set: a Set that is added to and
 * deleted from thousands of times is rehashed into new tables again and again, and V8 links each
 * replaced table to the next one (for iterators), so once one table is promoted to the old
 * generation, the later tables and the PUTs in them are kept alive by it until a full collection.
 */
class InFlightPuts {
  readonly #puts: InFlight[] = []
  /**
   * The longest any PUT went without progress before progress came (a chunk taken by the socket, or
   * the answer), in ms: the pace of this network and store, which a straggler must fall far behind.
   */
  longestQuiet = 0

  /** Progress of `put` now: its quiet time is measured against the longest. */
  progressed(put: InFlight, now: number): void {
    if (now - put.lastProgress > this.longestQuiet) this.longestQuiet = now - put.lastProgress
    put.lastProgress = now
  }

  add(put: InFlight): void {
    put.slot = this.#puts.length
    this.#puts.push(put)
  }

  delete(put: InFlight): void {
    if (this.#puts[put.slot] !== put) return
    const last = this.#puts.pop()!
    if (last !== put) {
      this.#puts[put.slot] = last
      last.slot = put.slot
    }
    put.slot = -1
  }

  /** A copy: aborting a PUT removes it. */
  all(): InFlight[] {
    return [...this.#puts]
  }
}

const READ_BUFFER = 256 * 1024
/** Read buffers per streamed part, used in turn (see readChunks). */
const RING = 3
/** Parts up to this size are read whole; larger ones are streamed. */
const SMALL_PART = 1024 * 1024
/** Parts up to this size are read into a buffer reused from PUT to PUT (see reusableBuffer). */
const REUSED_BUFFER = 64 * 1024
/** Store answers kept to explain a refusal (S3's XML errors are far smaller). */
const ERROR_BODY_LIMIT = 8 * 1024

/** Uploads every presigned part with bounded concurrency, then checks no file changed meanwhile. */
export async function uploadParts(options: UploadOptions): Promise<UploadResult> {
  const { signal } = options
  signal?.throwIfAborted()
  const requests =
    options.requests instanceof PresignedRequestList
      ? options.requests
      : PresignedRequestList.of(options.requests)
  const { parts, partCount } = planUpload(options.files, requests)
  const totalBytes = options.files.reduce((sum, f) => sum + f.size, 0)
  const started = options.retry.now()
  const progress = createProgress({
    files: options.files.length,
    bytes: totalBytes,
    logger: options.logger,
    now: options.retry.now,
    intervalMs: options.progressIntervalMs ?? 5_000,
  })
  let retries = 0
  const adaptive = new AdaptiveConcurrency(options.concurrency, (limit, note) => {
    limiter.concurrency = limit
    if (note) options.logger.info(note)
  })
  const limiter = pLimit(adaptive.current)
  const inFlight = new InFlightPuts()
  const buffers: Buffer[] = []
  const digests = new Array<string>(options.files.length)
  // Once a part has failed for good, the upload is over: no retry, no new PUT, those in flight are
  // aborted, and uploadParts returns only when every part's task has ended. Nothing is left to send
  // through the dispatcher its caller closes next (undici answers "The client is closed", a network
  // failure, which the parts still running retried, line after line, after the run had failed).
  const stop = new AbortController()
  const halted = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal
  const retry: RetryPolicy = { ...options.retry, signal: halted }
  // One timer for every PUT in flight instead of one per PUT, re-armed on every chunk: a PUT with no
  // byte sent or received for requestTimeoutMs is aborted (and retried) within a quarter of it more;
  // so is one past its deadline, and an answer whose body is still arriving requestTimeoutMs after
  // its headers (its bytes are no progress).
  const stallCheck = Math.max(5, Math.min(250, Math.floor(options.requestTimeoutMs / 4)))
  let allStarted = false
  const sweep = setInterval(() => {
    const now = performance.now()
    const tailStall = Math.max(options.tailStallMs ?? TAIL_STALL_MS, 4 * inFlight.longestQuiet)
    for (const put of inFlight.all()) {
      const quiet = now - put.lastProgress
      if (
        allStarted &&
        put.restartable &&
        !put.answered &&
        quiet >= tailStall &&
        quiet < options.requestTimeoutMs
      ) {
        put.abort(new TailStallError(`no progress for ${(quiet / 1000).toFixed(1)} s`))
      } else if (quiet >= options.requestTimeoutMs) {
        put.abort(
          new StalledError(
            put.answered
              ? `its answer's body was not complete ${options.requestTimeoutMs / 1000} s after its headers`
              : `no progress for ${options.requestTimeoutMs / 1000} s`,
          ),
        )
      } else if (now >= put.deadline && !put.answered) {
        put.abort(
          new StalledError(`not answered within its deadline of ${Math.round(put.limit / 100) / 10} s`),
        )
      }
    }
  }, stallCheck)
  sweep.unref()
  const order = soonestExpiringOrder(
    parts.length,
    (i) => requests.expiry(i),
    (i) => requests.contentLength(i),
  )
  function* partsInOrder(): Generator<Part> {
    for (const index of order) yield parts[index]!
    allStarted = true
  }
  /** Waits `ms` through the retry policy's sleep; rejects at once when the upload is halted. */
  const pause = (ms: number) =>
    new Promise<void>((resolve, reject) => {
      if (halted.aborted) return reject(halted.reason as Error)
      const onAbort = () => reject(halted.reason as Error)
      halted.addEventListener('abort', onAbort, { once: true })
      options.retry.sleep(ms, halted).then(
        () => {
          halted.removeEventListener('abort', onAbort)
          resolve()
        },
        (error: unknown) => {
          halted.removeEventListener('abort', onAbort)
          reject(error instanceof Error ? error : new Error(String(error)))
        },
      )
    })
  let descriptorsShort = false
  /** PUTs stored so far: a part refused while others are stored retries without growing its wait. */
  let stored = 0
  /** Parts sent again as stragglers at the upload's end (TAIL_STALL_MS), by request index. */
  const restarted = new Set<number>()
  /**
   * One attempt at a part. A file that cannot be opened for want of file descriptors (EMFILE, ENFILE:
   * the process's or the system's table is full, of files and sockets alike) is no failure of the
   * part: the uploads in flight are halved, as for a store's overload, said in one line, and the
   * part waits for some to end and opens it again, without a retry of its own. A straggler at the
   * end is sent again at once, once.
   */
  const attempt = async (part: Part) => {
    for (let wait = 0; ; wait++) {
      const epoch = adaptive.started()
      const storedBefore = stored
      try {
        const restartable = !restarted.has(part.index)
        await putPart(part, requests, options, progress, inFlight, buffers, digests, halted, restartable)
        adaptive.succeeded(epoch)
        stored++
        return
      } catch (error) {
        if (halted.aborted) throw error
        if (error instanceof PartUploadError && error.cause instanceof TailStallError) {
          restarted.add(part.index)
          retries++
          options.logger.info(
            `${describePart(part)}: ${error.cause.message}, while every other part has started: sent again`,
          )
          continue
        }
        if (isOutOfDescriptors(error)) {
          const code = errorCodes(error).find((c) => c === 'EMFILE' || c === 'ENFILE') ?? 'EMFILE'
          if (adaptive.overloaded(epoch) || !descriptorsShort) {
            options.logger.info(
              `Out of file descriptors (${code}): fewer uploads at a time, ${adaptive.current} now`,
            )
          }
          descriptorsShort = true
          if (wait < DESCRIPTOR_WAITS) {
            await pause(descriptorWait(wait))
            continue
          }
          throw new PartUploadError(
            `${describePart(part)}: out of file descriptors (${code}), even with ${adaptive.current} ` +
              `upload${adaptive.current === 1 ? '' : 's'} at a time: raise the limit (ulimit -n)`,
            undefined,
            false,
            { cause: error },
          )
        }
        // Judged by the round: a cut or its undoing is logged through the constructor's callback.
        if (isOverload(error)) adaptive.refused(epoch, shortOverload(error))
        if (error instanceof PartUploadError) error.storedMeanwhile = stored > storedBefore
        throw error
      }
    }
  }
  // A part refused while the store stored other PUTs: the store is up and the refusal this part's bad
  // luck, so its next wait is a first retry's. Only a refusal with nothing stored meanwhile (a store
  // down) waits as its failures so far make it; the load is the adaptive concurrency's to shed.
  const retryHooks: RetryHooks = {
    onRetry: () => retries++,
    backoffStep: (index, error) => (error instanceof PartUploadError && error.storedMeanwhile ? 0 : index),
  }
  let running = 0
  let allEnded: (() => void) | undefined
  const uploadOne = async (part: Part) => {
    if (halted.aborted) return
    running++
    try {
      await withRetries(
        describePart(part),
        () => attempt(part),
        (error) => error instanceof PartUploadError && error.retryable && !halted.aborted,
        retry,
        options.logger,
        retryHooks,
      )
      progress.partDone(part.file.path, part.of)
    } catch (error) {
      if (!stop.signal.aborted) {
        stop.abort(error)
        limiter.clearQueue()
        for (const put of inFlight.all()) put.abort(new Error('another part of the upload failed'))
      }
      throw error
    } finally {
      if (--running === 0) allEnded?.()
    }
  }
  // Files in parts are hashed in order by a reader of their own while their parts upload in any order.
  const hashedApart = options.hash ? partCount.flatMap((count, f) => (count > 1 ? [f] : [])) : []
  let onAbort: (() => void) | undefined
  const cancelled = new Promise<never>((_resolve, reject) => {
    if (!signal) return
    onAbort = () => {
      limiter.clearQueue()
      const reason: unknown = signal.reason
      for (const put of inFlight.all())
        put.abort(reason instanceof Error ? reason : new Error(String(reason)))
      // The caller's own reason, whatever it is, as AbortSignal users expect.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      reject(reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
  cancelled.catch(() => {})
  try {
    const apartFiles = hashedApart.map((f) => options.files[f]!)
    const [apart] = await Promise.race([
      Promise.all([
        hashArtifacts(apartFiles, 2, options.open),
        forEachLimited(partsInOrder(), limiter, uploadOne),
      ]),
      cancelled,
    ])
    signal?.throwIfAborted()
    hashedApart.forEach((f, i) => (digests[f] = apart[i]!))
  } finally {
    if (onAbort) signal?.removeEventListener('abort', onAbort)
    // A failed or cancelled upload ends its parts' tasks first (each is aborted or stops at its next
    // step; a request timeout's worth at most, so that a stuck one cannot hold the run).
    if (running > 0) {
      const ended = new Promise<void>((resolve) => (allEnded = resolve))
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        ended,
        new Promise<void>((resolve) => (timer = setTimeout(resolve, options.requestTimeoutMs))),
      ])
      clearTimeout(timer)
    }
    clearInterval(sweep)
    // What is left in flight are answers already taken (their headers said 2xx) whose bodies are
    // still arriving: nothing waits for them.
    for (const put of inFlight.all()) put.abort(new Error('the upload is over'))
    progress.stop()
  }
  // Each part's file was checked as its bytes were read (see assertUnchanged); a file no request asked
  // for (an empty one: planUpload checked that requests cover every byte) is checked here, and given
  // the SHA-256 of no bytes.
  await forEachLimited(
    partCount.flatMap((count, f) => (count === 0 ? [f] : [])),
    16,
    async (f) => {
      const file = options.files[f]!
      const now = await lstatFile(file.absolutePath).catch((error: unknown) => {
        throw new Error(`${file.path} was removed after it was scanned`, { cause: error })
      })
      if (!isScannedFile(file, now)) {
        throw new Error(
          `${file.path} was replaced after it was scanned: another file or a link is at its path now`,
        )
      }
      assertUnchanged(file, now)
      if (options.hash) digests[f] = hash('sha256', '')
    },
  )
  return {
    parts: parts.length,
    bytes: totalBytes,
    retries,
    durationMs: options.retry.now() - started,
    sha256: options.hash ? digests : undefined,
  }
}

/** The store asks for fewer requests: 503 SlowDown, 429, or a connection dropped or refused. */
function isOverload(error: unknown): boolean {
  if (!(error instanceof PartUploadError)) return false
  if (error.status === 503 || error.status === 429) return true
  return error.status === undefined && isNetworkFailure(error.cause)
}

function shortOverload(error: unknown): string {
  if (error instanceof PartUploadError && error.status !== undefined) return String(error.status)
  return 'connection lost'
}

export interface UploadPlan {
  /** One per request, by the request's index. */
  parts: Part[]
  /** The parts of each file, by its index: 0 when no request asks for it (an empty file may not be). */
  partCount: number[]
}

/**
 * Pairs each presigned request with its file and checks it asks for a range the file has, and that
 * the requests of each file cover each of its bytes exactly once: no gap, no overlap.
 */
export function planUpload(files: ArtifactFile[], requests: PresignedRequestList): UploadPlan {
  const byPath = new Map(files.map((f, i) => [f.path, i]))
  const partCount = files.map(() => 0)
  const parts: Part[] = []
  for (let i = 0; i < requests.length; i++) {
    const path = requests.path(i)
    const f = byPath.get(path)
    if (f === undefined) throw new Error(`The service asked for '${path}', which is not a file of this site`)
    const file = files[f]!
    const offset = requests.byteOffset(i)
    const length = requests.contentLength(i)
    if (offset < 0 || offset + length > file.size) {
      throw new Error(`The service asked for bytes ${offset}+${length} of '${path}', which has ${file.size}`)
    }
    parts.push({ index: i, file, fileIndex: f, number: ++partCount[f]!, of: 0 })
  }
  // Each file's ranges, in order of offset, must follow one another from its first byte to its last:
  // ranges that merely add up to its size may overlap and leave a gap, and the site would be
  // completed with bytes that are not the file's. A file in one request (every file of a CDN site)
  // is checked without a list of its own.
  const inParts = new Map<number, number[]>()
  for (const part of parts) {
    const count = partCount[part.fileIndex]!
    part.of = count
    if (count > 1) {
      const list = inParts.get(part.fileIndex)
      if (list) list.push(part.index)
      else inParts.set(part.fileIndex, [part.index])
    } else if (requests.contentLength(part.index) !== part.file.size) {
      throw new Error(
        `The service's upload requests for '${part.file.path}' cover ${requests.contentLength(part.index)} of its ${part.file.size} bytes`,
      )
    }
  }
  files.forEach((file, f) => {
    if (partCount[f] === 0 && file.size !== 0) {
      throw new Error(`The service's upload requests for '${file.path}' cover 0 of its ${file.size} bytes`)
    }
  })
  for (const [f, list] of inParts) {
    const file = files[f]!
    list.sort((a, b) => requests.byteOffset(a) - requests.byteOffset(b))
    const range = (i: number) => `${requests.byteOffset(i)}+${requests.contentLength(i)}`
    let end = 0
    let previous: number | undefined
    for (const i of list) {
      const offset = requests.byteOffset(i)
      if (offset < end) {
        throw new Error(
          `The service's upload requests for '${file.path}' overlap: bytes ${range(previous!)} and ${range(i)}`,
        )
      }
      if (offset > end) {
        throw new Error(
          `The service's upload requests for '${file.path}' leave a gap: bytes ${end}+${offset - end} ` +
            `(between ${previous === undefined ? 'its start' : `bytes ${range(previous)}`} and bytes ${range(i)})`,
        )
      }
      end = offset + requests.contentLength(i)
      previous = i
    }
    if (end !== file.size) {
      throw new Error(
        `The service's upload requests for '${file.path}' leave a gap: bytes ${end}+${file.size - end} ` +
          `(after bytes ${range(previous!)}, the last it asks for, to the end of its ${file.size} bytes)`,
      )
    }
  }
  return { parts, partCount }
}

function describePart(part: Part): string {
  return part.of === 1
    ? `Upload of ${part.file.path}`
    : `Upload of ${part.file.path} part ${part.number}/${part.of}`
}

async function putPart(
  part: Part,
  requests: PresignedRequestList,
  options: UploadOptions,
  progress: Progress,
  inFlight: InFlightPuts,
  buffers: Buffer[],
  digests: string[],
  halted: AbortSignal,
  restartable: boolean,
): Promise<void> {
  const offset = requests.byteOffset(part.index)
  const length = requests.contentLength(part.index)
  let body: Buffer | AsyncGenerator<Buffer>
  let md5: () => string
  // A part that is the whole file gives the file's SHA-256 from the same bytes (into `digests`).
  let sha256: (() => string) | undefined
  let hashers: { md5: Hash; sha256: Hash | undefined } | undefined
  const wholeFile = options.hash && part.of === 1
  let reused: Buffer | undefined
  // A streamed part's file, opened (and checked to be the scanned one) before anything is sent.
  let reader: ChunkReader | undefined
  if (length <= SMALL_PART) {
    // Most files of a web build are small: one read, one buffer, one hash call each, and none of
    // the objects of a stream.
    // The small ones go into a buffer an earlier PUT sent: a new buffer per file is memory outside
    // V8's heap that stays until V8 collects its wrapper.
    reused = length <= REUSED_BUFFER ? reusableBuffer(buffers, length) : undefined
    const bytes = await readRange(part, offset, length, reused, options.open)
    body = bytes
    md5 = () => hash('md5', bytes)
    if (wholeFile) sha256 = () => hash('sha256', bytes)
  } else {
    // Hashed from the chunks as undici writes them to the socket: exactly the bytes sent, one read.
    hashers = { md5: createHash('md5'), sha256: wholeFile ? createHash('sha256') : undefined }
    const { md5: m, sha256: s } = hashers
    md5 = () => m.digest('hex')
    if (s) sha256 = () => s.digest('hex')
    reader = { fd: await openScanned(part.file, options.open), started: false, stats: undefined }
    body = readChunks(part, reader, offset, length)
  }
  const headers: Record<string, string> = { 'content-length': String(length) }
  if (part.file.contentType) headers['content-type'] = part.file.contentType

  let sent = 0
  try {
    // The upload failed or was cancelled while this part's bytes were read: nothing more is sent.
    halted.throwIfAborted()
    const answer = await dispatchPut(
      options.dispatcher,
      requests.url(part.index),
      headers,
      body,
      inFlight,
      putDeadlineMs(length, options.requestTimeoutMs),
      restartable,
      (chunk) => {
        if (hashers) {
          hashers.md5.update(chunk)
          hashers.sha256?.update(chunk)
        }
        sent += chunk.length
        progress.addBytes(chunk.length)
      },
    )
    const status = answer.status
    if (status < 200 || status >= 300) {
      const retryable = status >= 500 || status === 408 || status === 429
      throw new PartUploadError(
        `${describePart(part)}: the store answered ${status} ${storeError(answer.text)}`,
        status,
        retryable,
      )
    }
    if (sent !== length) {
      throw new PartUploadError(`${describePart(part)}: sent ${sent} of ${length} bytes`, status, true)
    }
    const etag = answer.etag
    const expected = md5()
    if (
      etag !== undefined &&
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
    if (reader) await endReader(body as AsyncGenerator<Buffer>, reader)
    if (error instanceof PartUploadError) throw error
    if (halted.aborted && error === halted.reason) throw error
    const message = error instanceof Error ? error.message : String(error)
    const retryable = isNetworkFailure(error) || error instanceof StalledError
    throw new PartUploadError(`${describePart(part)}: ${message}`, undefined, retryable, { cause: error })
  }
  if (reader) {
    // Every byte was read and sent: the reader has checked the file after its last read.
    await endReader(body as AsyncGenerator<Buffer>, reader)
    if (!reader.stats) throw shrank(part)
    assertUnchanged(part.file, reader.stats)
  }
  if (sha256) digests[part.fileIndex] = sha256()
  // Answered 2xx: the store has every byte, so none is still queued to be written from it.
  if (reused) buffers.push(reused)
}

/** A streamed part's open file: readChunks closes it, unless it never started (see endReader). */
interface ChunkReader {
  fd: number
  started: boolean
  /** The file's fstat once every byte of the part was read. */
  stats: Stats | undefined
}

/**
 * Ends a streamed part's reader once its PUT is settled: a reader undici started closes its file in
 * its own `finally` (return() waits for a read in progress to end first, so the descriptor is never
 * closed under it); one it never started is closed here.
 */
async function endReader(body: AsyncGenerator<Buffer>, reader: ChunkReader): Promise<void> {
  await body.return(undefined).catch(() => {})
  if (!reader.started) {
    reader.started = true
    await closeFile(reader.fd).catch(() => {})
  }
}

interface StoreAnswer {
  status: number
  etag: string | undefined
  /** The body of an answer that is not 2xx (its start); empty otherwise. */
  text: string
}

/**
 * One PUT through undici's dispatch API with a handler of its own: the answer of a successful PUT
 * is its status and ETag, so no response stream, abort controller, or timer is made per request
 * (undici's request() makes a Readable for every answer and listens on a signal; with thousands of
 * small files those were most of the client's cost beyond node:http). The PUT joins `inFlight`
 * while it is on the wire: the stall sweep and cancellation abort it through undici's own abort.
 */
function dispatchPut(
  dispatcher: Dispatcher,
  url: string,
  headers: Record<string, string>,
  body: Buffer | AsyncIterable<Buffer>,
  inFlight: InFlightPuts,
  deadlineMs: number,
  restartable: boolean,
  onSent: (chunk: Buffer) => void,
): Promise<StoreAnswer> {
  // The origin and the rest, without a URL object per PUT (href, search and more, made and dropped).
  const slash = url.indexOf('/', url.indexOf('//') + 2)
  const origin = slash < 0 ? url : url.slice(0, slash)
  const target = slash < 0 ? '/' : url.slice(slash)
  return new Promise<StoreAnswer>((resolve, reject) => {
    const handler = new PutHandler(inFlight, deadlineMs, restartable, onSent, resolve, reject)
    try {
      // undici 6 takes an async iterable body too (core/request.js); its types leave it out.
      dispatcher.dispatch(
        { origin, path: target, method: 'PUT', headers, body: body as Dispatcher.DispatchOptions['body'] },
        handler as unknown as Dispatcher.DispatchHandlers,
      )
    } catch (error) {
      handler.onError(error instanceof Error ? error : new Error(String(error)))
    }
  })
}

/**
 * One PUT's handler for undici's dispatch API, and its entry among the PUTs in flight: one object
 * instead of an object literal and six closures. V8 may allocate the later copies of an object
 * literal straight into its old generation once many of them survived a collection
 * (allocation-site pretenuring, which the first PUTs, all started at once, trigger), and from there
 * a handler would keep its PUT's promises and frames alive until a full collection; that tracking
 * is for literals, not for instances of a class.
 *
 * The answer is taken as soon as it is known, not when its body ends: a 2xx answer's status and
 * ETag come with its headers, and its body is never read; an error's body is kept up to
 * ERROR_BODY_LIMIT and waited for request-timeout after the headers at most (the stall sweep: its
 * bytes are no progress), then taken as far as it came. The request stays in flight, its body
 * drained, until it ends or the sweep or the upload's end aborts it; that abort is no failure.
 */
class PutHandler implements InFlight {
  slot = -1
  lastProgress = performance.now()
  readonly deadline: number
  readonly limit: number
  readonly restartable: boolean
  answered = false
  private status = 0
  private etag: string | undefined
  private chunks: Buffer[] | undefined
  private kept = 0
  private abortRequest: ((reason: Error) => void) | undefined
  private pending: Error | undefined
  private settled = false
  private finished = false
  private readonly inFlight: InFlightPuts
  private readonly onSent: (chunk: Buffer) => void
  private readonly resolve: (answer: StoreAnswer) => void
  private readonly reject: (error: Error) => void

  constructor(
    inFlight: InFlightPuts,
    deadlineMs: number,
    restartable: boolean,
    onSent: (chunk: Buffer) => void,
    resolve: (answer: StoreAnswer) => void,
    reject: (error: Error) => void,
  ) {
    this.inFlight = inFlight
    this.limit = deadlineMs
    this.restartable = restartable
    this.deadline = this.lastProgress + deadlineMs
    this.onSent = onSent
    this.resolve = resolve
    this.reject = reject
    inFlight.add(this)
  }

  abort(reason: Error): void {
    if (this.abortRequest) this.abortRequest(reason)
    else this.pending = reason
  }

  onConnect(abort: (reason: Error) => void): void {
    this.abortRequest = abort
    if (this.pending) abort(this.pending)
  }

  // undici 6 calls it with each chunk written to the socket (its types say a size).
  onBodySent(chunk: Buffer | string): void {
    this.inFlight.progressed(this, performance.now())
    this.onSent(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.inFlight.progressed(this, performance.now())
    this.answered = true
    this.status = statusCode
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!
      if (name.length === 4 && name.toString('latin1').toLowerCase() === 'etag') {
        this.etag = rawHeaders[i + 1]!.toString('latin1')
      }
    }
    if (statusCode < 200 || statusCode >= 300) this.chunks = []
    else this.answer()
    return true
  }

  onData(chunk: Buffer): boolean {
    if (this.chunks && !this.settled) {
      this.chunks.push(chunk)
      this.kept += chunk.length
      if (this.kept >= ERROR_BODY_LIMIT) this.answer()
    }
    return true
  }

  onComplete(): void {
    this.leave()
    this.answer()
  }

  onError(error: Error): void {
    this.leave()
    // An answer whose headers came is taken as far as it came, whatever cut its body short.
    if (this.answered) this.answer()
    else if (!this.settled) {
      this.settled = true
      this.reject(error)
    }
  }

  private answer(): void {
    if (this.settled) return
    this.settled = true
    const text = this.chunks ? Buffer.concat(this.chunks).toString('utf8').slice(0, ERROR_BODY_LIMIT) : ''
    this.chunks = undefined
    this.resolve({ status: this.status, etag: this.etag, text })
  }

  /** The request has ended: it leaves the PUTs in flight. */
  private leave(): void {
    if (this.finished) return
    this.finished = true
    this.inFlight.delete(this)
  }
}

/**
 * The part's bytes in chunks of up to READ_BUFFER, read into RING buffers used in turn instead of a
 * new buffer per read (a read stream's are memory outside V8's heap that each forces collections to
 * free). Safe because undici writes an iterable body chunk by chunk and waits for 'drain' whenever
 * the socket holds more than its high-water mark (64 KiB, 16 KiB with TLS: less than a chunk): when
 * the next chunk is asked for, the last full one was at least partly written, so every chunk before
 * it has left the process; a buffer is reused only RING chunks later, which leaves room for one
 * short read. The MD5 of what was sent is checked against the ETag anyway. The file was opened
 * (openScanned) before the PUT; the reader closes it.
 */
async function* readChunks(
  part: Part,
  reader: ChunkReader,
  offset: number,
  length: number,
): AsyncGenerator<Buffer> {
  reader.started = true
  const { fd } = reader
  try {
    const size = Math.min(READ_BUFFER, length)
    const ring = Array.from({ length: RING }, () => Buffer.allocUnsafe(size))
    for (let done = 0, turn = 0; done < length; turn++) {
      const buffer = ring[turn % RING]!
      const bytesRead = await readAt(fd, buffer, 0, Math.min(size, length - done), offset + done)
      if (bytesRead === 0) throw shrank(part)
      done += bytesRead
      // Checked after the last read, before its bytes go: the PUT may be answered before undici
      // asks for the end of the chunks.
      if (done === length) reader.stats = fstatSync(fd)
      yield buffer.subarray(0, bytesRead)
    }
  } finally {
    await closeFile(fd)
  }
}

/**
 * Bytes offset..offset+length of the part's file, read in one go (small parts only), from the file
 * the scan opened (openScanned), and checked unchanged once read.
 */
async function readRange(
  part: Part,
  offset: number,
  length: number,
  into: Buffer | undefined,
  openWith: OpenFile | undefined,
): Promise<Buffer> {
  const bytes = into ? into.subarray(0, length) : Buffer.allocUnsafe(length)
  const fd = await openScanned(part.file, openWith)
  try {
    let done = 0
    while (done < length) {
      const bytesRead = await readAt(fd, bytes, done, length - done, offset + done)
      if (bytesRead === 0) throw shrank(part)
      done += bytesRead
    }
    assertUnchanged(part.file, fstatSync(fd))
    return bytes
  } finally {
    await closeFile(fd)
  }
}

/**
 * A buffer of at least `length` bytes that an earlier PUT sent, or a new one of the next power of two
 * (4 KiB at least). Parts go largest first, so the buffers made first serve the smaller parts after
 * them; one too small is left to the collector, not kept: there are never more buffers than PUTs in
 * flight, none larger than REUSED_BUFFER.
 */
function reusableBuffer(buffers: Buffer[], length: number): Buffer {
  const buffer = buffers.pop()
  if (buffer && buffer.length >= length) return buffer
  return Buffer.allocUnsafe(Math.max(4096, 2 ** Math.ceil(Math.log2(length))))
}

function shrank(part: Part): Error {
  return new Error(`${part.file.path} changed while it was uploaded: it is shorter than when it was hashed`)
}

/** The code and message of an object store's XML error body, or the start of whatever it sent. */
function storeError(text: string): string {
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1]
  const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1]
  if (code) return message ? `${code}: ${message}` : code
  return text.trim().slice(0, 200)
}

/**
 * A site is never completed with bytes that differ from the manifest: a file is checked as the scan
 * found it once its part's bytes are read, through the descriptor they were read from. fstat on a
 * descriptor held open reads an inode the kernel already has (NFS too: the open revalidated it), so
 * it is made synchronously rather than as a fourth round trip per file through the thread pool
 * beside open, read and close. A change after the read is no error: the bytes sent are the ones
 * read and checked.
 */
function assertUnchanged(file: ArtifactFile, now: Stats): void {
  if (now.size !== file.size || now.mtimeMs !== file.mtimeMs) {
    throw new Error(
      `${file.path} changed while it was uploaded (size ${file.size} -> ${now.size}); the upload was not completed`,
    )
  }
}
