// What is in flight, and the sweep that aborts a PUT that stalled, ran past its deadline, or is a
// straggler holding up the end of the upload.
import type { Timeouts } from '../../common/timeouts.ts'

/** Why the watchdog aborted a PUT (no progress, or past its deadline): retried like a lost connection. */
export class StalledError extends Error {
  override name = 'StalledError'
}

/** Why the watchdog aborted a straggler at the upload's end (see TAIL_STALL_MS): sent again at once. */
export class TailStallError extends Error {
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
export const TAIL_STALL_MS = 1_000

/** A PUT on the wire: what the watchdog and cancellation need to reach it. */
export interface InFlight {
  lastProgress: number
  /** A straggler at the upload's end may be sent again once (TAIL_STALL_MS): not sent again yet. */
  readonly restartable: boolean
  /** performance.now() past which it is aborted, progress or not (Timeouts.putDeadlineMs). */
  readonly deadline: number
  /** Its deadline, in ms from its start. */
  readonly limit: number
  /** Its answer's headers arrived: only the body is left, whose bytes are no progress. */
  readonly answered: boolean
  abort(reason: Error): void
  /** Its index in InFlightPuts. */
  slot: number
}

/**
 * The PUTs on the wire, in an array with swap-remove rather than a Set: a Set that is added to and
 * deleted from thousands of times is rehashed into new tables again and again, and V8 links each
 * replaced table to the next one (for iterators), so once one table is promoted to the old
 * generation, the later tables and the PUTs in them are kept alive by it until a full collection
 * (with a Set the 20,000-file deploy peaked at 294 MiB against 204, BENCHMARKS.md).
 */
export class InFlightPuts {
  readonly #puts: InFlight[] = []
  /**
   * The longest any PUT went without progress before progress came (a chunk taken by the socket, or
   * the answer), in ms: the pace of this network and store, which a straggler must fall far behind.
   */
  longestQuiet = 0

  get size(): number {
    return this.#puts.length
  }

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

/**
 * One timer for every PUT in flight instead of one per PUT, re-armed on every chunk: a PUT with no
 * byte sent or received for Timeouts.stallMs is aborted (and retried) within a sweep more; so is one
 * past its deadline, and an answer whose body is still arriving stallMs after its headers (its bytes
 * are no progress). Once every part has started, a straggler is aborted to be sent again (the tail
 * rule, TAIL_STALL_MS).
 */
export class Watchdog {
  readonly puts = new InFlightPuts()
  readonly #timeouts: Timeouts
  readonly #tailStallMs: number
  #everyPartStarted = false
  #timer: NodeJS.Timeout | undefined

  constructor(timeouts: Timeouts, tailStallMs = TAIL_STALL_MS) {
    this.#timeouts = timeouts
    this.#tailStallMs = tailStallMs
  }

  start(): void {
    this.#timer = setInterval(() => this.sweep(performance.now()), this.#timeouts.sweepMs)
    this.#timer.unref()
  }

  /** No part is left to start: the tail rule applies from now on. */
  everyPartStarted(): void {
    this.#everyPartStarted = true
  }

  /** Aborts each PUT in flight that is past one of its limits at `now` (performance.now()). */
  sweep(now: number): void {
    const tailStall = Math.max(this.#tailStallMs, 4 * this.puts.longestQuiet)
    for (const put of this.puts.all()) {
      const reason = this.#verdict(put, now - put.lastProgress, now, tailStall)
      if (reason) put.abort(reason)
    }
  }

  #verdict(put: InFlight, quiet: number, now: number, tailStall: number): Error | undefined {
    const { stallMs } = this.#timeouts
    const straggler = this.#everyPartStarted && put.restartable && !put.answered
    if (straggler && quiet >= tailStall && quiet < stallMs) {
      return new TailStallError(`no progress for ${(quiet / 1000).toFixed(1)} s`)
    }
    if (quiet >= stallMs) {
      return new StalledError(
        put.answered
          ? `its answer's body was not complete ${stallMs / 1000} s after its headers`
          : `no progress for ${stallMs / 1000} s`,
      )
    }
    if (now >= put.deadline && !put.answered) {
      return new StalledError(`not answered within its deadline of ${Math.round(put.limit / 100) / 10} s`)
    }
    return undefined
  }

  /** Aborts every PUT in flight with `reason`. */
  abortAll(reason: Error): void {
    for (const put of this.puts.all()) put.abort(reason)
  }

  stop(): void {
    clearInterval(this.#timer)
  }
}
