// What is in flight, and the sweep that aborts a PUT that stalled, ran past its deadline, or is a
// straggler holding up the end of the upload.
import type { Clock, Timeouts } from '../../common/timeouts.ts'

/** Retried like a lost connection. */
export class StalledError extends Error {
  override name = 'StalledError'
}

/** A straggler at the upload's end: sent again at once. */
export class TailStallError extends Error {
  override name = 'TailStallError'
}

/**
 * Once every part has started, a PUT quiet this long and 4 times the longest quiet seen is a
 * straggler the upload waits for: sent again at once, once per part.
 */
const TAIL_STALL_MS = 1_000

export interface InFlight {
  lastProgress: number
  /** Not sent again yet (TAIL_STALL_MS). */
  readonly restartable: boolean
  /** The time (InFlightPuts.clock) past which it is aborted, progress or not. */
  readonly deadline: number
  /** The deadline in ms from its start. */
  readonly limit: number
  /** Its headers arrived: its body's bytes are no progress. */
  readonly answered: boolean
  abort(reason: Error): void
  /** Index in InFlightPuts. */
  slot: number
}

/**
 * Swap-remove rather than a Set: V8 links each rehashed table of a Set to the next, so one promoted
 * table keeps the later ones alive until a full collection (BENCHMARKS.md).
 */
export class InFlightPuts {
  readonly #puts: InFlight[] = []
  /** Of stalls and deadlines: monotonic, unless a test gives its own. */
  readonly clock: Clock

  constructor(clock: Clock = performance) {
    this.clock = clock
  }

  /** In ms: the pace of this network and store, which a straggler must fall far behind. */
  longestQuiet = 0

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

/** One timer for every PUT in flight, not one per PUT re-armed on every chunk. */
export class Watchdog {
  readonly puts: InFlightPuts
  readonly #timeouts: Timeouts
  readonly #tailStallMs: number
  #everyPartStarted = false
  #timer: NodeJS.Timeout | undefined

  constructor(timeouts: Timeouts, tailStallMs = TAIL_STALL_MS, clock?: Clock) {
    this.puts = new InFlightPuts(clock)
    this.#timeouts = timeouts
    this.#tailStallMs = tailStallMs
  }

  start(): void {
    this.#timer = setInterval(() => this.sweep(this.puts.clock.now()), this.#timeouts.sweepMs)
    this.#timer.unref()
  }

  everyPartStarted(): void {
    this.#everyPartStarted = true
  }

  sweep(now: number): void {
    for (const put of this.puts.all()) {
      const reason = this.#verdict(put, now)
      if (reason) put.abort(reason)
    }
  }

  #verdict(put: InFlight, now: number): Error | undefined {
    const { stallMs } = this.#timeouts
    const quiet = now - put.lastProgress
    const tailStall = Math.max(this.#tailStallMs, 4 * this.puts.longestQuiet)
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
  }

  abortAll(reason: Error): void {
    for (const put of this.puts.all()) put.abort(reason)
  }

  stop(): void {
    clearInterval(this.#timer)
  }
}
