/**
 * A task per item, at most `concurrency` at a time; an item is taken only when a place is free. The
 * first failure rejects `run`; running tasks are left to end (`whenIdle`).
 */
export class Scheduler<T> {
  #concurrency: number
  #running = 0
  #feed = () => {}
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
    return this.#running
  }

  run(items: Iterable<T>, task: (item: T) => Promise<void>): Promise<void> {
    const iterator = items[Symbol.iterator]()
    let exhausted = false
    let failed = false
    return new Promise<void>((resolve, reject) => {
      const fail = (error: unknown) => {
        if (failed) return
        failed = true
        reject(error instanceof Error ? error : new Error(String(error)))
      }
      const ended = () => {
        this.#running--
        if (this.#running === 0) this.#idle?.()
        this.#feed()
      }
      this.#feed = () => {
        try {
          while (!failed && !exhausted && this.#running < this.#concurrency) {
            const next = iterator.next()
            if (next.done) exhausted = true
            else {
              this.#running++
              task(next.value).catch(fail).finally(ended)
            }
          }
        } catch (error) {
          fail(error)
        }
        if (exhausted && this.#running === 0 && !failed) resolve()
      }
      this.#feed()
    })
  }

  whenIdle(): Promise<void> {
    if (this.#running === 0) return Promise.resolve()
    return new Promise<void>((resolve) => (this.#idle = resolve))
  }
}
