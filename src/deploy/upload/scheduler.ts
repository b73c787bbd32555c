/**
 * A task per item, at most `concurrency` at a time; an item is taken only when a place is free. The
 * first failure rejects `run`; running tasks are left to end (`whenIdle`).
 */
export class Scheduler<T> {
  #concurrency: number
  #items: Iterator<T> | undefined
  #task: ((item: T) => Promise<void>) | undefined
  #unfinished = 0
  #exhausted = false
  #failed = false
  #settle: { resolve: () => void; reject: (error: Error) => void } | undefined
  #idle: (() => void) | undefined

  constructor(concurrency: number) {
    this.#concurrency = Math.max(1, concurrency)
  }

  get concurrency(): number {
    return this.#concurrency
  }

  set concurrency(limit: number) {
    this.#concurrency = Math.max(1, limit)
    this.#feed()
  }

  get running(): number {
    return this.#unfinished
  }

  run(items: Iterable<T>, task: (item: T) => Promise<void>): Promise<void> {
    this.#items = items[Symbol.iterator]()
    this.#task = task
    return new Promise<void>((resolve, reject) => {
      this.#settle = { resolve, reject }
      this.#feed()
    })
  }

  whenIdle(): Promise<void> {
    if (this.#unfinished === 0) return Promise.resolve()
    return new Promise<void>((resolve) => (this.#idle = resolve))
  }

  #feed(): void {
    const task = this.#task
    if (!task || !this.#items) return
    try {
      while (!this.#failed && !this.#exhausted && this.#unfinished < this.#concurrency) {
        const next = this.#items.next()
        if (next.done) this.#exhausted = true
        else {
          this.#unfinished++
          task(next.value).then(
            () => this.#ended(undefined),
            (error: unknown) => this.#ended(error instanceof Error ? error : new Error(String(error))),
          )
        }
      }
    } catch (error) {
      this.#fail(error instanceof Error ? error : new Error(String(error)))
    }
    if (this.#exhausted && this.#unfinished === 0 && !this.#failed) this.#settle?.resolve()
  }

  #ended(error: Error | undefined): void {
    this.#unfinished--
    if (error) this.#fail(error)
    if (this.#unfinished === 0) this.#idle?.()
    this.#feed()
  }

  #fail(error: Error): void {
    if (this.#failed) return
    this.#failed = true
    this.#settle?.reject(error)
  }
}
