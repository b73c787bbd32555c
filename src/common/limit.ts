import pLimit, { type LimitFunction } from 'p-limit'

/**
 * Runs `task` for every item under a p-limit limiter, fed lazily: an item is taken from `items` only
 * when fewer than the limit's concurrency are unfinished, so p-limit starts it at once and a site of
 * tens of thousands of files never holds a promise per file (BENCHMARKS.md, "Kept"). Pass a number,
 * or a p-limit limiter whose `concurrency` may change as it runs.
 *
 * Nothing waits in p-limit's queue, on purpose: it is a linked list whose dequeued nodes keep their
 * `next`, so once one node is promoted to V8's old generation, every node queued after it (and the
 * task it holds) is kept alive by the one before and promoted too, until a full collection.
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
      while (!failed && !exhausted && unfinished < limiter.concurrency) {
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
