import pLimit, { type LimitFunction } from 'p-limit'

/** Items handed to p-limit ahead of those running, per unit of concurrency. */
const AHEAD = 2

/**
 * Runs `task` for every item under a p-limit limiter, fed lazily: items are taken from `items` only
 * while fewer than AHEAD x the limit's concurrency are running or queued, so a site of tens of
 * thousands of files never holds a promise per file (queuing them all at once held ~15 MiB for
 * 20,000). Pass a number, or a p-limit limiter whose `concurrency` may change as it runs.
 *
 * The first task to fail rejects the whole; no item is taken after it, the queued ones are dropped,
 * and the tasks already running are left to finish (their own failures are ignored).
 */
export function forEachLimited<T>(
  items: Iterable<T>,
  limit: number | LimitFunction,
  task: (item: T, index: number) => Promise<void>,
): Promise<void> {
  const limiter = typeof limit === 'number' ? pLimit(Math.max(1, limit)) : limit
  const iterator = items[Symbol.iterator]()
  let index = 0
  let unfinished = 0
  let exhausted = false
  let failed = false
  return new Promise<void>((resolve, reject) => {
    const settle = () => {
      unfinished--
      feed()
    }
    const fail = (error: unknown) => {
      unfinished--
      if (failed) return
      failed = true
      limiter.clearQueue()
      reject(error instanceof Error ? error : new Error(String(error)))
    }
    const feed = () => {
      while (!failed && !exhausted && unfinished < AHEAD * limiter.concurrency) {
        const next = iterator.next()
        if (next.done) {
          exhausted = true
          break
        }
        unfinished++
        limiter(task, next.value, index++).then(settle, fail)
      }
      if (exhausted && unfinished === 0 && !failed) resolve()
    }
    try {
      feed()
    } catch (error) {
      failed = true
      reject(error instanceof Error ? error : new Error(String(error)))
    }
  })
}
