/**
 * Runs `task` for every item, at most `workers` at a time, each worker taking the next item when it
 * is done. Unlike queuing every item at once (p-limit), it holds no pending promise per item: a site
 * can have tens of thousands of files. `worker` (0 to workers-1) lets a task use per-worker state.
 */
export async function forEachInPool<T>(
  items: readonly T[],
  workers: number,
  task: (item: T, index: number, worker: number) => Promise<void>,
): Promise<void> {
  let next = 0
  const run = async (worker: number) => {
    for (let index = next++; index < items.length; index = next++) await task(items[index]!, index, worker)
  }
  await Promise.all(Array.from({ length: Math.min(workers, items.length) }, (_, worker) => run(worker)))
}
