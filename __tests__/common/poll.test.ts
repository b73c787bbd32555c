// pollUntil, the one poll loop: its waits double from the first to the longest, or keep one pace.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FIRST_WAIT_MS, pollUntil } from '../../src/common/poll.ts'

function virtualTime() {
  let now = 0
  const sleeps: number[] = []
  return {
    sleeps,
    clock: { now: () => now },
    sleep: (ms: number) => {
      sleeps.push(ms)
      now += ms
      return Promise.resolve()
    },
  }
}

test('waits double from FIRST_WAIT_MS, the last one cut to the bound', async () => {
  const time = virtualTime()
  const polled = await pollUntil(() => Promise.resolve({}), {
    timeoutMs: 4000,
    clock: time.clock,
    sleep: time.sleep,
    signal: new AbortController().signal,
  })
  assert.equal(polled.seen, false)
  assert.deepEqual(time.sleeps, [FIRST_WAIT_MS, 1000, 2000, 500])
})

test('equal first and longest waits keep one pace, and a check that sees it ends the poll', async () => {
  const time = virtualTime()
  let left = 3
  const polled = await pollUntil(() => Promise.resolve(left-- > 0 ? {} : undefined), {
    timeoutMs: 1000,
    clock: time.clock,
    sleep: time.sleep,
    signal: new AbortController().signal,
    waits: { firstMs: 100, longestMs: 100 },
  })
  assert.deepEqual(polled, { seen: true, attempts: 4, durationMs: 300 })
  assert.deepEqual(time.sleeps, [100, 100, 100])
})
