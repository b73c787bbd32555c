// One upload under way: the scheduler that starts parts, the watchdog over the PUTs in flight, and
// each part's attempts, driven by the decision table (outcome.ts).
import type { Dispatcher } from 'undici'
import type { PresignedRequestList } from '../../api/presigned.ts'
import { abortable, type RetryPolicy } from '../../common/retry.ts'
import { soonestExpiringOrder } from '../../api/expiry.ts'
import type { Logger } from '../../common/logger.ts'
import type { Clock, Timeouts } from '../../common/timeouts.ts'
import { AdaptiveConcurrency } from '../adaptive.ts'
import type { OpenFile } from '../fd.ts'
import { createProgress, type Progress } from '../progress.ts'
import { Integrity } from './integrity.ts'
import { decide, type Action, type AttemptState } from './outcome.ts'
import { describePart, planUpload, type Part, type UploadFile, type UploadPlan } from './plan.ts'
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
  /** The clock of the PUTs' stalls and deadlines (performance unless a test gives its own). */
  stallClock?: Clock
  logger: Logger
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

export async function uploadParts(options: UploadOptions): Promise<UploadResult> {
  options.signal?.throwIfAborted()
  const run = new UploadRun(options)
  const started = options.retry.now()
  const sha256 = await run.sendAll()
  return {
    parts: run.plan.parts.length,
    bytes: options.files.reduce((sum, f) => sum + f.size, 0),
    retries: run.retries,
    durationMs: options.retry.now() - started,
    sha256,
  }
}

export class UploadRun {
  readonly plan: UploadPlan
  readonly integrity: Integrity
  readonly progress: Progress
  readonly watchdog: Watchdog
  readonly adaptive: AdaptiveConcurrency
  readonly scheduler: Scheduler<Part>
  retries = 0
  /** PUTs stored so far: a part refused while others are stored retries without growing its wait. */
  stored = 0
  readonly #options: UploadOptions
  readonly #send: SendContext
  // Once a part has failed for good: no retry, no new PUT, those in flight aborted.
  readonly #stop = new AbortController()
  readonly halted: AbortSignal
  #descriptorsShort = false

  constructor(options: UploadOptions) {
    this.#options = options
    this.plan = planUpload(options.files, options.requests)
    this.halted = options.signal ? AbortSignal.any([options.signal, this.#stop.signal]) : this.#stop.signal
    this.integrity = new Integrity({
      ...options,
      plan: this.plan,
      failed: (error) => this.#stop.abort(error),
    })
    this.progress =
      options.progress ??
      createProgress({
        files: options.files.length,
        bytes: options.files.reduce((sum, f) => sum + f.size, 0),
        logger: options.logger,
        now: options.retry.now,
      })
    this.watchdog = new Watchdog(options.timeouts, options.tailStallMs, options.stallClock)
    this.halted.addEventListener('abort', () => this.watchdog.abortAll(this.halted.reason as Error), {
      once: true,
    })
    this.scheduler = new Scheduler<Part>(options.concurrency)
    this.adaptive = new AdaptiveConcurrency(options.concurrency, (limit, note) => {
      this.scheduler.concurrency = limit
      if (note) options.logger.info(note)
    })
    this.scheduler.concurrency = this.adaptive.current
    this.#send = {
      ...options,
      inFlight: this.watchdog.puts,
      progress: this.progress,
      buffers: [],
      integrity: this.integrity,
      halted: this.halted,
    }
  }

  /** The SHA-256 of each file proved (integrity.ts); rejects with the first failure. */
  async sendAll(): Promise<string[]> {
    const { signal } = this.#options
    this.watchdog.start()
    try {
      const uploaded = this.scheduler.run(this.#partsInOrder(), (part) => this.#uploadPart(part))
      const digests = await abortable(
        uploaded.then(() => this.integrity.finish()),
        signal,
      )
      signal?.throwIfAborted()
      return digests
    } catch (error) {
      this.#stop.abort(error)
      throw error
    } finally {
      await this.#end()
    }
  }

  /** The parts, the soonest-expiring first; the tail rule starts once the last has been taken. */
  *#partsInOrder(): Generator<Part> {
    const { requests } = this.#options
    const { parts } = this.plan
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
      firstAttemptAt: this.#options.retry.now(),
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
        state.now = this.#options.retry.now()
        state.concurrency = this.adaptive.current
        const action = decide(outcome, state, this.#options.retry)
        if (action.kind === 'done') break
        if (action.kind === 'send-again') restarted = true
        await this.#act(action, state, epoch)
      }
    } catch (error) {
      this.#stop.abort(error)
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

  /** Rejects at once when the upload is halted. */
  #pause(ms: number): Promise<void> {
    return abortable(this.#options.retry.sleep(ms, this.halted), this.halted)
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
