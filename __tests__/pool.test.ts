import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setImmediate as tick } from 'node:timers/promises'
import { forEachInPool } from '../src/pool.ts'

describe('forEachInPool', () => {
  it('runs every item once, never more than the given number at a time', async () => {
    const items = Array.from({ length: 100 }, (_, i) => i)
    const seen: number[] = []
    let running = 0
    let most = 0
    const workersSeen = new Set<number>()
    await forEachInPool(items, 7, async (item, index, worker) => {
      assert.equal(item, index)
      workersSeen.add(worker)
      running++
      most = Math.max(most, running)
      await tick()
      seen.push(item)
      running--
    })
    assert.deepEqual(
      [...seen].sort((a, b) => a - b),
      items,
    )
    assert.equal(most, 7)
    assert.deepEqual([...workersSeen].sort(), [0, 1, 2, 3, 4, 5, 6])
  })

  it('takes no new item once a task failed, and rejects with that failure', async () => {
    const started: number[] = []
    await assert.rejects(
      forEachInPool(
        Array.from({ length: 50 }, (_, i) => i),
        4,
        async (item) => {
          started.push(item)
          await tick()
          if (item === 5) throw new Error('part 5 failed')
          if (item > 5) throw new Error('a later failure is not the one reported')
        },
      ),
      /part 5 failed/,
    )
    await tick()
    await tick()
    // Items 0-3 start at once; 4-7 as those end; 8 and up would follow item 5's failure.
    assert.ok(Math.max(...started) <= 8, `started ${started.join(',')}`)
  })

  it('does nothing for no items', async () => {
    await forEachInPool([], 3, () => Promise.reject(new Error('never called')))
  })
})
