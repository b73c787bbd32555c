// pollUntil, the one poll loop: its waits double from the first to the longest, or keep one pace; a
// long poll says how it stands every PROGRESS_EVERY_MS, between checks and during one.
import assert from 'node:assert/strict'
import { beforeEach, describe, test } from 'node:test'
import {
  describeProgress,
  FIRST_WAIT_MS,
  pollUntil,
  PROGRESS_EVERY_MS,
  type NotYet,
} from '../../src/common/poll.ts'
import { virtualTime, type VirtualTime } from '../support/virtual-time.ts'

function pacedTime() {
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
  const time = pacedTime()
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
  const time = pacedTime()
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

interface Said extends NotYet {
  why: string
}

describe('a long poll says how it stands', () => {
  const lines: string[] = []
  const standing = (time: VirtualTime, check: (attempt: number) => Promise<Said | undefined>) =>
    pollUntil(check, {
      timeoutMs: 60_000,
      clock: time.clock,
      sleep: time.sleep,
      signal: new AbortController().signal,
      progress: {
        timer: time.timer,
        say: (progress) => lines.push(`${time.clock.now()} ${describeProgress(progress, ({ why }) => why)}`),
      },
    })
  beforeEach(() => (lines.length = 0))

  test('every PROGRESS_EVERY_MS until the bound, each with what the last check said and the time left', async () => {
    const time = virtualTime()
    const polled = await standing(time, (attempt) => Promise.resolve({ why: `answered 404 (${attempt})` }))
    assert.equal(polled.seen, false)
    assert.equal(PROGRESS_EVERY_MS, 15_000)
    assert.deepEqual(lines, [
      '15000 after 15.0 s (5 checks): answered 404 (5); 45 s left',
      '30000 after 30.0 s (7 checks): answered 404 (7); 30 s left',
      '45000 after 45.0 s (8 checks): answered 404 (8); 15 s left',
      '60000 after 60.0 s (10 checks): answered 404 (10); 0 s left',
    ])
  })

  test('a check that does not answer is said to wait, and a poll that ends stops saying', async () => {
    const time = virtualTime()
    const polled = await standing(time, (attempt) => {
      // The third check's answer takes 20 s; the fourth sees it.
      if (attempt === 3) time.advance(20_000)
      return Promise.resolve(attempt < 4 ? { why: `answered 404 (${attempt})` } : undefined)
    })
    assert.equal(polled.seen, true)
    assert.deepEqual(lines, [
      '15000 after 15.0 s (2 checks): check 3 has waited 13.5 s for an answer (check 2: answered 404 (2)); 45 s left',
    ])
    time.advance(60_000)
    assert.equal(lines.length, 1, 'nothing said once the poll ended')
  })

  test('a first check that does not answer', async () => {
    const time = virtualTime()
    await standing(time, () => {
      time.advance(16_000)
      return Promise.resolve(undefined)
    })
    assert.deepEqual(lines, ['15000 after 15.0 s: check 1 has waited 15.0 s for an answer; 45 s left'])
  })
})
