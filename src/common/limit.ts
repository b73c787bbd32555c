/**
 * Runs `task` for every item, `limit` at a time, each item taken from `items` only when one of the
 * `limit` workers is free: a site of tens of thousands of files never holds a promise per file.
 *
 * The first task to fail rejects the whole; no item is taken after it, and the tasks already running
 * are left to finish (their own failures are ignored).
 */
export async function forEachLimited<T>(
  items: Iterable<T>,
  limit: number,
  task: (item: T, index: number) => Promise<void>,
): Promise<void> {
  const iterator = items[Symbol.iterator]()
  let index = 0
  let failed = false
  const worker = async (): Promise<void> => {
    while (!failed) {
      const next = iterator.next()
      if (next.done) return
      try {
        await task(next.value, index++)
      } catch (error) {
        failed = true
        throw error instanceof Error ? error : new Error(String(error))
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, limit) }, worker))
}
