/**
 * Adaptive concurrency for the part uploads: additive increase, multiplicative decrease (AIMD), as
 * TCP does with its window. The configured concurrency is the ceiling and the start. When the store
 * says it is overloaded (503 SlowDown, 429) or drops connections, the number in flight is halved;
 * each time as many PUTs as are allowed in flight have succeeded, it grows by one again.
 *
 * One storm halves the limit once, not once per failed PUT: a failure of a PUT started before the
 * last decrease says nothing new (it was sent at the old rate), so it is ignored.
 */
export class AdaptiveConcurrency {
  readonly max: number
  #current: number
  #successes = 0
  #epoch = 0
  readonly #onChange: (limit: number) => void

  constructor(max: number, onChange: (limit: number) => void = () => {}) {
    this.max = Math.max(1, Math.floor(max))
    this.#current = this.max
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
    if (++this.#successes >= this.#current) {
      this.#successes = 0
      this.#set(this.#current + 1)
    }
  }

  /** A PUT started at `epoch` met a sign of overload. Returns true when this lowered the limit. */
  overloaded(epoch: number): boolean {
    if (epoch !== this.#epoch) return false
    this.#epoch++
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
