/**
 * Runs `task` for every item, at most `workers` at a time, each worker taking the next item when it
 * is done. Unlike queuing every item at once (p-limit), it holds no pending promise per item: a site
 * can have tens of thousands of files (measured: p-limit's queue of 20,000 parts held ~15 MiB of
 * promises and closures). `worker` (0 to workers-1) lets a task use per-worker state.
 *
 * The first task to fail rejects the whole; no worker takes another item after it, and the tasks
 * already running are left to finish (their own failures are ignored).
 */
export async function forEachInPool<T>(
  items: readonly T[],
  workers: number,
  task: (item: T, index: number, worker: number) => Promise<void>,
): Promise<void> {
  let next = 0
  const run = async (worker: number) => {
    for (let index = next++; index < items.length; index = next++) {
      try {
        await task(items[index]!, index, worker)
      } catch (error) {
        next = items.length
        throw error
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(workers, items.length) }, (_, worker) => run(worker)))
}
