// One upload under way: the scheduler that starts parts, the watchdog over the PUTs in flight, and
// each part's attempts, driven by the decision table (outcome.ts).
import { hash } from 'node:crypto'
import type { PresignedRequestList } from '../../api/presigned.ts'
import type { RetryPolicy } from '../../api/retry.ts'
import { soonestExpiringOrder } from '../../api/expiry.ts'
import { AdaptiveConcurrency } from '../adaptive.ts'
import { hashArtifacts, type ArtifactFile } from '../files.ts'
import { PROGRESS_INTERVAL_MS, createProgress, type Progress } from '../progress.ts'
import { isBytesFile } from './body.ts'
import { decide, type Action, type AttemptState } from './outcome.ts'
import { describePart, type Part, type UploadPlan } from './plan.ts'
import { Scheduler } from './scheduler.ts'
import { sendPart, type SendContext } from './send.ts'
import { Watchdog } from './watchdog.ts'
import type { UploadOptions } from '../upload.ts'

export class UploadRun {
  readonly digests: string[]
  readonly progress: Progress
  readonly watchdog: Watchdog
  readonly adaptive: AdaptiveConcurrency
  readonly scheduler: Scheduler<Part>
  /** Retries and straggler restarts, for the result. */
  retries = 0
  /** PUTs stored so far: a part refused while others are stored retries without growing its wait. */
  stored = 0
  readonly #options: UploadOptions
  readonly #requests: PresignedRequestList
  readonly #plan: UploadPlan
  readonly #send: SendContext
  readonly #policy: RetryPolicy
  // Once a part has failed for good, the upload is over: no retry, no new PUT, those in flight are
  // aborted, and the upload returns only when every part's task has ended (or drainMs has passed).
  // Nothing is left to send through the dispatcher its caller closes next.
  readonly #stop = new AbortController()
  readonly halted: AbortSignal
  #descriptorsShort = false

  constructor(options: UploadOptions, requests: PresignedRequestList, plan: UploadPlan) {
    this.#options = options
    this.#requests = requests
    this.#plan = plan
    this.#policy = options.retry
    this.halted = options.signal ? AbortSignal.any([options.signal, this.#stop.signal]) : this.#stop.signal
    this.digests = new Array<string>(options.files.length)
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
      body: { hash: options.hash, open: options.open, buffers: [] },
      digests: this.digests,
      halted: this.halted,
    }
  }

  /** Every part sent (and the files in parts hashed, when hashing); rejects with the first failure. */
  async sendAll(): Promise<void> {
    const { signal } = this.#options
    this.watchdog.start()
    let onAbort: (() => void) | undefined
    const cancelled = new Promise<never>((_resolve, reject) => {
      if (!signal) return
      onAbort = () => {
        const reason: unknown = signal.reason
        this.watchdog.abortAll(reason instanceof Error ? reason : new Error(String(reason)))
        // The caller's own reason, whatever it is, as AbortSignal users expect.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        reject(reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
    })
    cancelled.catch(() => {})
    try {
      const uploaded = this.scheduler.run(this.#partsInOrder(), (part) => this.#uploadPart(part))
      await Promise.race([Promise.all([this.#hashApart(), uploaded]), cancelled])
      signal?.throwIfAborted()
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

  /** A part's attempts, until the decision table says it is done or the upload stops. */
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

  /** What the decision table said, short of done: the part is tried again after it, or the upload stops. */
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
        // Judged by the round: a cut or its undoing is logged through AdaptiveConcurrency's callback.
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

  /** The first failure stops the upload: no new PUT, those in flight aborted. */
  #fail(error: unknown): void {
    if (this.#stop.signal.aborted) return
    this.#stop.abort(error)
    this.watchdog.abortAll(new Error('another part of the upload failed'))
  }

  /** Waits `ms` through the retry policy's sleep; rejects at once when the upload is halted. */
  #pause(ms: number): Promise<void> {
    const halted = this.halted
    return new Promise<void>((resolve, reject) => {
      if (halted.aborted) return reject(halted.reason as Error)
      const onAbort = () => reject(halted.reason as Error)
      halted.addEventListener('abort', onAbort, { once: true })
      const done = () => halted.removeEventListener('abort', onAbort)
      this.#policy.sleep(ms, halted).then(
        () => (done(), resolve()),
        (error: unknown) => (done(), reject(error instanceof Error ? error : new Error(String(error)))),
      )
    })
  }

  /** Files sent in parts are hashed in order by a reader of their own while their parts upload in any order. */
  async #hashApart(): Promise<void> {
    if (!this.#options.hash) return
    const { files } = this.#options
    const apart = this.#plan.partCount.flatMap((count, f) => (count > 1 ? [f] : []))
    const onDisk = apart.filter((f) => !isBytesFile(files[f]!))
    const digests = await hashArtifacts(
      onDisk.map((f) => files[f] as ArtifactFile),
      2,
      this.#options.open,
    )
    onDisk.forEach((f, i) => (this.digests[f] = digests[i]!))
    for (const f of apart) {
      const file = files[f]!
      if (isBytesFile(file)) this.digests[f] = hash('sha256', file.bytes)
    }
  }

  /**
   * A failed or cancelled upload ends its parts' tasks first (each is aborted or stops at its next
   * step; drainMs at most, so that a stuck one cannot hold the run). What is left in flight then are
   * answers already taken (their headers said 2xx) whose bodies are still arriving: nothing waits for them.
   */
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
