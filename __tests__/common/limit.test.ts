import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setImmediate as tick } from 'node:timers/promises'
import { forEachLimited } from '../../src/common/limit.ts'

describe('forEachLimited', () => {
  it('runs every item once, never more than the limit at a time', async () => {
    const items = Array.from({ length: 100 }, (_, i) => i)
    const seen: number[] = []
    let running = 0
    let most = 0
    await forEachLimited(items, 7, async (item, index) => {
      assert.equal(item, index)
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
  })

  it('takes items lazily: only as many as can start', async () => {
    let taken = 0
    let finished = 0
    let mostAhead = 0
    function* items() {
      for (let i = 0; i < 1_000; i++) {
        taken++
        mostAhead = Math.max(mostAhead, taken - finished)
        yield i
      }
    }
    await forEachLimited(items(), 4, async () => {
      await tick()
      finished++
    })
    assert.equal(finished, 1_000)
    assert.ok(mostAhead <= 4, `at most 4 items taken ahead, saw ${mostAhead}`)
  })

  it('rejects with the first failure and takes no item after it', async () => {
    const started: number[] = []
    const error = await forEachLimited(
      Array.from({ length: 50 }, (_, i) => i),
      3,
      async (item) => {
        started.push(item)
        await tick()
        if (item === 4) throw new Error('item 4 failed')
      },
    ).catch((e: unknown) => e)
    assert.ok(error instanceof Error)
    assert.equal(error.message, 'item 4 failed')
    await tick()
    await tick()
    assert.ok(started.length < 12, `stopped soon after the failure, started ${started.length}`)
  })

  it('resolves at once for no items', async () => {
    let calls = 0
    await forEachLimited([], 4, async () => {
      calls++
    })
    assert.equal(calls, 0)
  })
})
