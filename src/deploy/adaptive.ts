import { DEFAULT_CONCURRENCY } from '../inputs/constants.ts'

/** PUTs in flight when an upload starts, below a higher ceiling: the default concurrency (see AdaptiveConcurrency). */
export const SLOW_START = DEFAULT_CONCURRENCY

/** The fewest PUTs in flight a cut leaves (or the ceiling, if lower): a store's errors never starve an upload. */
export const FLOOR = 4

/** The fewest finished PUTs a round counts: fewer say too little about a share refused. */
export const MIN_ROUND = 16

/**
 * Adaptive concurrency for the part uploads, as TCP does with its window, in rounds: a round ends
 * when as many PUTs have finished (stored, or refused for overload) as were allowed in flight when it
 * began, about one round trip, and at least MIN_ROUND. The limit is cut at most once per round, from
 * what the round saw. The configured concurrency is the ceiling; FLOOR (or the ceiling, if lower) the
 * floor.
 *
 * An upload starts with SLOW_START PUTs in flight (or the ceiling, if lower): as many as the default
 * concurrency, where the benchmark found the upload fastest (BENCHMARKS.md). Above it, one more for each PUT
 * that is stored, which doubles the number each round, until the ceiling or the first sign of
 * overload.
 *
 * Overload is a 503 SlowDown, a 429 or a dropped connection. A round in which the store refused more
 * PUTs than it is known to refuse anyway (`tolerated`, with a margin for chance) halves the limit,
 * and the round after it is the test: it counts only PUTs started after the cut. A store that takes
 * what it can and refuses the rest stores about as many PUTs per round at half the limit, so the
 * share it stores grows by half or more (doubles, past twice its capacity): then it was overloaded,
 * the cut stays, and from then on the limit grows by an eighth each clean round. If the share stored
 * did not grow so, the refusals do not come from our load (a flaky network, a store that fails a
 * share of requests whatever the rate): the limit goes back to where it was and that share is
 * tolerated from then on, so random errors never grind an upload down to one PUT at a time. At the
 * floor no cut is possible, and what the store refuses there is tolerated too. The tolerated share
 * falls again with the shares of later rounds that are lower.
 *
 * A sign of overload that leaves no doubt (our own: out of file descriptors) halves the limit at
 * once instead (`overloaded`), ending the slow start, at most once per round too.
 *
 * A refused PUT or a stored one that was started before the last cut or restore says nothing about
 * the new limit (it was sent at the old one), so it is not counted.
 */
export class AdaptiveConcurrency {
  readonly max: number
  readonly floor: number
  #current: number
  /** Bumped by each cut and restore: PUTs started before it are not counted. */
  #epoch = 0
  /** PUTs of the current epoch finished in this round, and of them refused for overload. */
  #finished = 0
  #refused = 0
  #kinds = new Set<string>()
  /** Finished PUTs that end the round: the limit when it began, MIN_ROUND at least. */
  #roundSize: number
  #slowStart = true
  /** The limit changed in this round: no other cut until it ends. */
  #fresh = false
  /** The share of PUTs the store refuses whatever our load, as far as we know. */
  #tolerated = 0
  /** The cut under test: the limit before it and what its round saw. */
  #trial: { from: number; share: number; slowStart: boolean } | undefined
  readonly #onChange: (limit: number, note: string | undefined) => void

  /**
   * `onChange` is called with each new limit (not with the first, `current`), and with a line for the
   * log when the change is news: a cut, a cut undone, the ceiling reached again after a cut.
   */
  constructor(
    max: number,
    onChange: (limit: number, note: string | undefined) => void = () => {},
    start = SLOW_START,
  ) {
    this.max = Math.max(1, Math.floor(max))
    this.floor = Math.min(FLOOR, this.max)
    this.#current = Math.min(this.max, Math.max(this.floor, Math.floor(start)))
    this.#roundSize = Math.max(MIN_ROUND, this.#current)
    this.#onChange = onChange
  }

  get current(): number {
    return this.#current
  }

  /** Finished PUTs (of the current epoch) that end the current round. */
  get roundSize(): number {
    return this.#roundSize
  }

  /** The share of PUTs refused that is taken for the store's own, not overload. */
  get tolerated(): number {
    return this.#tolerated
  }

  /** Call when a PUT starts; hand the value back to `succeeded`, `refused` or `overloaded`. */
  started(): number {
    return this.#epoch
  }

  /** A PUT started at `epoch` was stored. */
  succeeded(epoch: number): void {
    if (epoch !== this.#epoch) return
    this.#finished++
    // Slow start: one more per PUT stored, unless this round is already refused too much.
    if (this.#slowStart && !this.#trial && this.#current < this.max && this.#mayGrow()) {
      this.#current++
      this.#onChange(this.#current, undefined)
    }
    this.#endRound()
  }

  /**
   * The store refused a PUT started at `epoch` in a way that may mean overload: `kind` names it for
   * the log (`503`, `429`, `connection lost`). Judged with the rest of its round.
   */
  refused(epoch: number, kind: string): void {
    if (epoch !== this.#epoch) return
    this.#finished++
    this.#refused++
    this.#kinds.add(kind)
    this.#endRound()
  }

  /**
   * A PUT started at `epoch` met a sure sign of overload: the limit is halved now, unless it was
   * already changed in this round (or the PUT started before that). Returns true when this lowered
   * the limit; the caller says so in the log.
   */
  overloaded(epoch: number): boolean {
    if (epoch !== this.#epoch || this.#fresh) return false
    this.#slowStart = false
    this.#trial = undefined
    const lower = Math.max(this.floor, Math.floor(this.#current / 2))
    if (lower === this.#current) return false
    this.#change(lower, undefined)
    return true
  }

  /** Not too many refusals in this round, nor more refused than stored: a store refusing most gets no more. */
  #mayGrow(): boolean {
    return !this.#tooMany() && 2 * this.#refused <= this.#finished
  }

  /** More refusals in this round than the tolerated share explains, with a margin for chance. */
  #tooMany(): boolean {
    const n = this.#finished
    const t = this.#tolerated
    return this.#refused > t * n + 2 * Math.sqrt(n * t * (1 - t)) + 1
  }

  #endRound(): void {
    if (this.#finished < this.#roundSize) return
    const share = this.#refused / this.#finished
    const tooMany = this.#tooMany()
    const mayGrow = this.#mayGrow()
    const kinds = [...this.#kinds].join(', ')
    this.#finished = 0
    this.#refused = 0
    this.#kinds.clear()
    this.#fresh = false
    const trial = this.#trial
    this.#trial = undefined
    if (trial) {
      if (1 - share < 1.5 * (1 - trial.share)) {
        // Half the PUTs in flight, and the store took no larger a share: not overload.
        this.#tolerated = (share + trial.share) / 2
        this.#slowStart = trial.slowStart
        this.#change(
          trial.from,
          `Not overload: the store refused ${percent(share)} of uploads at ${this.#current} at a time, ` +
            `${percent(trial.share)} at ${trial.from}; ${trial.from} uploads at a time`,
        )
        return
      }
      this.#slowStart = false
    }
    if (tooMany) {
      if (this.#current <= this.floor) {
        // No cut below the floor: what the store refuses here is its own.
        this.#tolerated = share
        this.#roundSize = Math.max(MIN_ROUND, this.#current)
        return
      }
      const half = Math.max(this.floor, Math.floor(this.#current / 2))
      this.#trial = { from: this.#current, share, slowStart: this.#slowStart }
      this.#change(half, `The store signals overload (${kinds}): ${half} uploads at a time`)
      return
    }
    // A clean round: the tolerated share follows a lower one down.
    if (share < this.#tolerated) this.#tolerated += (share - this.#tolerated) / 8
    if (!this.#slowStart && this.#current < this.max && mayGrow) {
      const next = Math.min(this.max, this.#current + Math.max(1, Math.floor(this.#current / 8)))
      this.#current = next
      this.#onChange(next, next === this.max ? `${next} uploads at a time again` : undefined)
    }
    this.#roundSize = Math.max(MIN_ROUND, this.#current)
  }

  /** A cut or a restore: a new epoch, and a round of the new limit. */
  #change(limit: number, note: string | undefined): void {
    this.#epoch++
    this.#fresh = true
    this.#finished = 0
    this.#refused = 0
    this.#kinds.clear()
    this.#current = limit
    this.#roundSize = Math.max(MIN_ROUND, limit)
    this.#onChange(limit, note)
  }
}

function percent(share: number): string {
  return `${Math.round(share * 100)}%`
}
