// One upload under way: the scheduler that starts parts, the watchdog over the PUTs in flight, and
// each part's attempts, driven by the decision table (outcome.ts).
import type { Dispatcher } from 'undici'
import type { PresignedRequestList } from '../../api/presigned.ts'
import { abortable, type RetryPolicy } from '../../common/retry.ts'
import { soonestExpiringOrder } from '../../api/expiry.ts'
import type { Logger } from '../../common/logger.ts'
import type { Timeouts } from '../../common/timeouts.ts'
import { AdaptiveConcurrency } from '../adaptive.ts'
import type { OpenFile } from '../fd.ts'
import { PROGRESS_INTERVAL_MS, createProgress, type Progress } from '../progress.ts'
import { Integrity } from './integrity.ts'
import { decide, type Action, type AttemptState } from './outcome.ts'
import { describePart, type Part, type UploadFile, type UploadPlan } from './plan.ts'
import { Scheduler } from './scheduler.ts'
import { sendPart, type SendContext } from './send.ts'
import { Watchdog } from './watchdog.ts'

export interface UploadOptions {
  files: readonly UploadFile[]
  requests: PresignedRequestList
  /** The SHA-256 a file had when hashed before the upload, by index: the bytes sent must have it. */
  expected?: readonly (string | undefined)[]
  dispatcher: Dispatcher
  /** The most PUTs in flight (AdaptiveConcurrency decides below it). */
  concurrency: number
  retry: RetryPolicy
  timeouts: Timeouts
  /** How long a straggler at the upload's end waits before it is sent again. */
  tailStallMs?: number
  logger: Logger
  progressIntervalMs?: number
  /** The progress of a larger whole (a site's files, then its record): its owner stops it. */
  progress?: Progress
  signal?: AbortSignal
  open?: OpenFile
}

export interface UploadResult {
  parts: number
  bytes: number
  retries: number
  durationMs: number
  /** Of each file's bytes as sent, by index. */
  sha256: string[]
}

export class UploadRun {
  readonly integrity: Integrity
  readonly progress: Progress
  readonly watchdog: Watchdog
  readonly adaptive: AdaptiveConcurrency
  readonly scheduler: Scheduler<Part>
  retries = 0
  /** PUTs stored so far: a part refused while others are stored retries without growing its wait. */
  stored = 0
  readonly #options: UploadOptions
  readonly #requests: PresignedRequestList
  readonly #plan: UploadPlan
  readonly #send: SendContext
  readonly #policy: RetryPolicy
  // Once a part has failed for good: no retry, no new PUT, those in flight aborted.
  readonly #stop = new AbortController()
  readonly halted: AbortSignal
  #descriptorsShort = false

  constructor(options: UploadOptions, requests: PresignedRequestList, plan: UploadPlan) {
    this.#options = options
    this.#requests = requests
    this.#plan = plan
    this.#policy = options.retry
    this.halted = options.signal ? AbortSignal.any([options.signal, this.#stop.signal]) : this.#stop.signal
    this.integrity = new Integrity({
      files: options.files,
      plan,
      requests,
      expected: options.expected,
      open: options.open,
      failed: (error) => this.#fail(error),
    })
    this.progress =
      options.progress ??
      createProgress({
        files: options.files.length,
        bytes: options.files.reduce((sum, f) => sum + f.size, 0),
        logger: options.logger,
        now: options.retry.now,
        intervalMs: options.progressIntervalMs ?? PROGRESS_INTERVAL_MS,
      })
    this.watchdog = new Watchdog(options.timeouts, options.tailStallMs)
    this.scheduler = new Scheduler<Part>(options.concurrency)
    this.adaptive = new AdaptiveConcurrency(options.concurrency, (limit, note) => {
      this.scheduler.concurrency = limit
      if (note) options.logger.info(note)
    })
    this.scheduler.concurrency = this.adaptive.current
    this.#send = {
      requests,
      dispatcher: options.dispatcher,
      timeouts: options.timeouts,
      inFlight: this.watchdog.puts,
      progress: this.progress,
      open: options.open,
      buffers: [],
      integrity: this.integrity,
      halted: this.halted,
    }
  }

  /** The SHA-256 of each file proved (integrity.ts); rejects with the first failure. */
  async sendAll(): Promise<string[]> {
    const { signal } = this.#options
    this.watchdog.start()
    let onAbort: (() => void) | undefined
    const cancelled = new Promise<never>((_resolve, reject) => {
      if (!signal) return
      onAbort = () => {
        const reason: unknown = signal.reason
        this.watchdog.abortAll(reason instanceof Error ? reason : new Error(String(reason)))
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        reject(reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
    })
    cancelled.catch(() => {})
    try {
      const uploaded = this.scheduler.run(this.#partsInOrder(), (part) => this.#uploadPart(part))
      const digests = await Promise.race([uploaded.then(() => this.integrity.finish()), cancelled])
      signal?.throwIfAborted()
      return digests
    } catch (error) {
      this.#fail(error)
      throw error
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort)
      await this.#end()
    }
  }

  /** The parts, the soonest-expiring first; the tail rule starts once the last has been taken. */
  *#partsInOrder(): Generator<Part> {
    const requests = this.#requests
    const { parts } = this.#plan
    const order = soonestExpiringOrder(
      parts.length,
      (i) => requests.expiry(i),
      (i) => requests.contentLength(i),
    )
    for (const index of order) yield parts[index]!
    this.watchdog.everyPartStarted()
  }

  async #uploadPart(part: Part): Promise<void> {
    if (this.halted.aborted) return
    const state: AttemptState = {
      describe: describePart(part),
      retries: 0,
      descriptorWaits: 0,
      storedAtDescriptorWait: this.stored,
      storedMeanwhile: false,
      firstAttemptAt: this.#policy.now(),
      now: 0,
      concurrency: 0,
    }
    let restarted = false
    try {
      for (;;) {
        this.halted.throwIfAborted()
        const epoch = this.adaptive.started()
        const storedBefore = this.stored
        const outcome = await sendPart(part, this.#send, !restarted)
        if (this.halted.aborted) throw this.halted.reason
        state.storedMeanwhile = this.stored > storedBefore
        if (outcome.kind === 'stored') {
          this.adaptive.succeeded(epoch)
          this.stored++
        }
        state.now = this.#policy.now()
        state.concurrency = this.adaptive.current
        const action = decide(outcome, state, this.#policy)
        if (action.kind === 'done') break
        if (action.kind === 'send-again') restarted = true
        await this.#act(action, state, epoch)
      }
    } catch (error) {
      this.#fail(error)
      throw error
    }
    this.progress.partDone(part.file.path, part.of)
  }

  async #act(action: Exclude<Action, { kind: 'done' }>, state: AttemptState, epoch: number): Promise<void> {
    const { logger } = this.#options
    switch (action.kind) {
      case 'stop':
        throw action.error
      case 'send-again':
        this.retries++
        logger.info(action.note)
        return
      case 'retry':
        if (action.overload) this.adaptive.refused(epoch, action.overload)
        state.retries++
        this.retries++
        logger.info(action.note)
        return this.#pause(action.waitMs)
      case 'fewer':
        if (this.adaptive.overloaded(epoch) || !this.#descriptorsShort) {
          logger.info(
            `Out of file descriptors (${action.code}): fewer uploads at a time, ${this.adaptive.current} now`,
          )
        }
        this.#descriptorsShort = true
        // A part stored since this part's last wait gave descriptors back: its waits start over.
        if (this.stored !== state.storedAtDescriptorWait) state.descriptorWaits = 0
        state.storedAtDescriptorWait = this.stored
        state.descriptorWaits++
        return this.#pause(action.waitMs)
    }
  }

  #fail(error: unknown): void {
    if (this.#stop.signal.aborted) return
    this.#stop.abort(error)
    this.watchdog.abortAll(new Error('another part of the upload failed'))
  }

  /** Rejects at once when the upload is halted. */
  #pause(ms: number): Promise<void> {
    return abortable(this.#policy.sleep(ms, this.halted), this.halted)
  }

  /** The parts' tasks end first (drainMs at most); 2xx bodies still arriving are not waited for. */
  async #end(): Promise<void> {
    if (this.scheduler.running > 0) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        this.scheduler.whenIdle(),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, this.#options.timeouts.drainMs))),
      ])
      clearTimeout(timer)
    }
    this.watchdog.stop()
    this.watchdog.abortAll(new Error('the upload is over'))
    if (!this.#options.progress) this.progress.stop()
  }
}
