import { DEFAULT_CONCURRENCY } from '../inputs/constants.ts'

/** PUTs in flight at the start: the default concurrency, the fastest in the benchmark (BENCHMARKS.md). */
export const SLOW_START = DEFAULT_CONCURRENCY
/** The fewest PUTs in flight a cut leaves (or the ceiling, if lower). */
export const FLOOR = 4
/** The fewest finished PUTs a round counts. */
export const MIN_ROUND = 16

/**
 * Adaptive concurrency for the PUTs, as TCP does with its window, in rounds of as many finished PUTs
 * as were allowed when the round began (MIN_ROUND at least); at most one cut a round. Slow start adds
 * one per PUT stored until the ceiling or overload (503, 429, a dropped connection).
 *
 * A round refusing more than the `tolerated` share (with a margin for chance) halves the limit, and
 * the next round tests the cut: if the share stored did not grow by half, the refusals are not our
 * load (a flaky network), so the limit is restored and that share tolerated from then on; random
 * errors never grind an upload down to one PUT. Else the cut stays and the limit grows by an eighth
 * each clean round. `overloaded` (out of descriptors) halves at once. PUTs started before the last
 * cut or restore (another epoch) are not counted.
 */
export class AdaptiveConcurrency {
  readonly max: number
  readonly floor: number
  #current: number
  #epoch = 0
  #finished = 0
  #refused = 0
  #kinds = new Set<string>()
  #roundSize: number
  #slowStart = true
  /** The limit changed in this round: no other cut until it ends. */
  #fresh = false
  #tolerated = 0
  /** The cut under test. */
  #trial: { from: number; share: number; slowStart: boolean } | undefined
  readonly #onChange: (limit: number, note: string | undefined) => void

  /** `onChange` hears each new limit, with a line for the log when it is news. */
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

  get roundSize(): number {
    return this.#roundSize
  }

  get tolerated(): number {
    return this.#tolerated
  }

  /** Call when a PUT starts; hand the value back to `succeeded`, `refused` or `overloaded`. */
  started(): number {
    return this.#epoch
  }

  succeeded(epoch: number): void {
    if (epoch !== this.#epoch) return
    this.#finished++
    if (this.#slowStart && !this.#trial && this.#current < this.max && this.#mayGrow()) {
      this.#current++
      this.#onChange(this.#current, undefined)
    }
    this.#endRound()
  }

  /** `kind` names it for the log (`503`, `429`, `connection lost`). */
  refused(epoch: number, kind: string): void {
    if (epoch !== this.#epoch) return
    this.#finished++
    this.#refused++
    this.#kinds.add(kind)
    this.#endRound()
  }

  /** A sure sign of overload: true when this lowered the limit. */
  overloaded(epoch: number): boolean {
    if (epoch !== this.#epoch || this.#fresh) return false
    this.#slowStart = false
    this.#trial = undefined
    const lower = Math.max(this.floor, Math.floor(this.#current / 2))
    if (lower === this.#current) return false
    this.#change(lower, undefined)
    return true
  }

  #mayGrow(): boolean {
    return !this.#tooMany() && 2 * this.#refused <= this.#finished
  }

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
    const trial = this.#trial
    this.#trial = undefined
    this.#fresh = false
    if (trial && 1 - share < 1.5 * (1 - trial.share)) {
      // Half the PUTs in flight, and the store took no larger a share: not overload.
      this.#tolerated = (share + trial.share) / 2
      this.#slowStart = trial.slowStart
      return this.#change(
        trial.from,
        `Not overload: the store refused ${percent(share)} of uploads at ${this.#current} at a time, ` +
          `${percent(trial.share)} at ${trial.from}; ${trial.from} uploads at a time`,
      )
    }
    if (trial) this.#slowStart = false
    if (tooMany && this.#current > this.floor) {
      const half = Math.max(this.floor, Math.floor(this.#current / 2))
      this.#trial = { from: this.#current, share, slowStart: this.#slowStart }
      return this.#change(half, `The store signals overload (${kinds}): ${half} uploads at a time`)
    }
    if (tooMany) {
      // No cut below the floor: what the store refuses here is its own.
      this.#tolerated = share
    } else {
      // A clean round: the tolerated share follows a lower one down.
      if (share < this.#tolerated) this.#tolerated += (share - this.#tolerated) / 8
      if (!this.#slowStart && this.#current < this.max && mayGrow) {
        const next = Math.min(this.max, this.#current + Math.max(1, Math.floor(this.#current / 8)))
        this.#current = next
        this.#onChange(next, next === this.max ? `${next} uploads at a time again` : undefined)
      }
    }
    this.#newRound()
  }

  #change(limit: number, note: string | undefined): void {
    this.#epoch++
    this.#fresh = true
    this.#current = limit
    this.#newRound()
    this.#onChange(limit, note)
  }

  #newRound(): void {
    this.#finished = 0
    this.#refused = 0
    this.#kinds.clear()
    this.#roundSize = Math.max(MIN_ROUND, this.#current)
  }
}

function percent(share: number): string {
  return `${Math.round(share * 100)}%`
}
