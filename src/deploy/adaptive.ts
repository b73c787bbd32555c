/** PUTs in flight when an upload starts, below a higher ceiling (see AdaptiveConcurrency). */
export const SLOW_START = 16

/**
 * Adaptive concurrency for the part uploads, as TCP does with its window: a slow start, then
 * additive increase, multiplicative decrease (AIMD). The configured concurrency is the ceiling.
 *
 * An upload starts with SLOW_START PUTs in flight (or the ceiling, if lower), one more for each PUT
 * that succeeds, which doubles the number each round, until the ceiling or the store's first sign
 * of overload. A store is never hit by the whole ceiling of new connections at once, for the cost
 * of a few round trips. It also keeps the memory steadier: the upload starts just after the site's
 * answer is read, when V8 is often collecting the old generation, and a burst of PUTs there can keep
 * their garbage promoted through the whole upload (BENCHMARKS.md).
 *
 * When the store says it is overloaded (503 SlowDown, 429) or drops connections, the number in
 * flight is halved; each time as many PUTs as are allowed in flight have succeeded, it grows by one
 * again. One storm halves the limit once, not once per failed PUT: a failure of a PUT started before
 * the last decrease says nothing new (it was sent at the old rate), so it is ignored.
 */
export class AdaptiveConcurrency {
  readonly max: number
  #current: number
  #successes = 0
  #epoch = 0
  #slowStart = true
  readonly #onChange: (limit: number) => void

  /** `onChange` is called with each new limit, not with the first (`current`). */
  constructor(max: number, onChange: (limit: number) => void = () => {}, start = SLOW_START) {
    this.max = Math.max(1, Math.floor(max))
    this.#current = Math.min(this.max, Math.max(1, Math.floor(start)))
    this.#onChange = onChange
  }

  get current(): number {
    return this.#current
  }

  /** Call when a PUT starts; hand the value back to `overloaded` if that PUT fails so. */
  started(): number {
    return this.#epoch
  }

  succeeded(): void {
    if (this.#current >= this.max) return
    if (this.#slowStart) {
      this.#set(this.#current + 1)
      return
    }
    if (++this.#successes >= this.#current) {
      this.#successes = 0
      this.#set(this.#current + 1)
    }
  }

  /** A PUT started at `epoch` met a sign of overload. Returns true when this lowered the limit. */
  overloaded(epoch: number): boolean {
    if (epoch !== this.#epoch) return false
    this.#epoch++
    this.#slowStart = false
    this.#successes = 0
    const lower = Math.max(1, Math.floor(this.#current / 2))
    if (lower === this.#current) return false
    this.#set(lower)
    return true
  }

  #set(limit: number): void {
    this.#current = limit
    this.#onChange(limit)
  }
}
