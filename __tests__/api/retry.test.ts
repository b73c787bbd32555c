import assert from 'node:assert/strict'
import { test } from 'node:test'
import { errorMessage, NetworkError, ServiceError } from '../../src/api/errors.ts'
import {
  backoffDelay,
  decideRetry,
  isConnectFailure,
  isNetworkFailure,
  requestedDelay,
  retryPolicy,
  withRetries,
} from '../../src/api/retry.ts'
import { memoryLogger } from '../../src/common/logger.ts'

const now = Date.parse('2026-11-21T10:00:00Z')

function rateLimited(retryAfter?: string, metadata?: unknown): ServiceError {
  return new ServiceError({
    operation: 'op',
    status: 429,
    body: { code: 'API_RATE_LIMIT', message: 'slow down', ray_id: 'r', metadata },
    retryAfter,
  })
}

test('backoff doubles, with jitter between half and all of it, capped', () => {
  const low = retryPolicy({ random: () => 0 })
  const high = retryPolicy({ random: () => 1 })
  assert.deepEqual(
    [0, 1, 2, 3].map((n) => backoffDelay(n, low)),
    [250, 500, 1000, 2000],
  )
  assert.deepEqual(
    [0, 1, 2, 3].map((n) => backoffDelay(n, high)),
    [500, 1000, 2000, 4000],
  )
  assert.equal(backoffDelay(20, high), 30_000)
})

test('retry-after as seconds, as an HTTP date, and the metadata retry time', () => {
  assert.equal(requestedDelay(rateLimited('3'), now), 3000)
  assert.equal(requestedDelay(rateLimited(new Date(now + 7000).toUTCString()), now), 7000)
  assert.equal(requestedDelay(rateLimited(undefined, now + 4500), now), 4500)
  assert.equal(requestedDelay(rateLimited('1', now + 4500), now), 4500)
  assert.equal(requestedDelay(rateLimited(new Date(now - 5000).toUTCString()), now), 0)
  assert.equal(requestedDelay(rateLimited(), now), undefined)
  assert.equal(requestedDelay(new Error('x'), now), undefined)
})

test('network failures are told apart from connections never made', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
  const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' })
  const wrapped = new Error('fetch failed', { cause: reset })
  assert.ok(isConnectFailure(refused) && isNetworkFailure(refused))
  assert.ok(!isConnectFailure(reset) && isNetworkFailure(reset))
  assert.ok(isNetworkFailure(wrapped))
  assert.ok(!isNetworkFailure(new Error('plain')))
})

test('withRetries waits what the service asks, then succeeds', async () => {
  const waits: number[] = []
  const policy = retryPolicy({ now: () => now, random: () => 0, sleep: async (ms) => void waits.push(ms) })
  let calls = 0
  const logger = memoryLogger()
  const value = await withRetries(
    'thing',
    async () => {
      calls++
      if (calls === 1) throw rateLimited('2')
      if (calls === 2) throw Object.assign(new Error('reset'), { code: 'ECONNRESET' })
      return 'ok'
    },
    () => true,
    policy,
    logger,
  )
  assert.equal(value, 'ok')
  assert.deepEqual(waits, [2000, 500])
  assert.match(logger.lines[0]!, /^thing: 429 API_RATE_LIMIT; retry 1 of 8 in 2\.0 s$/)
})

test('withRetries stops after the retries and when told not to', async () => {
  const policy = retryPolicy({ retries: 2, sleep: async () => {} })
  let calls = 0
  await assert.rejects(
    withRetries(
      'x',
      async () => {
        calls++
        throw new Error(`fail ${calls}`)
      },
      () => true,
      policy,
      memoryLogger(),
    ),
    /^Error: fail 3 \(gave up after 3 attempts\)$/,
  )
  calls = 0
  await assert.rejects(
    withRetries(
      'x',
      async () => {
        calls++
        throw new Error('final')
      },
      () => false,
      policy,
      memoryLogger(),
    ),
    /final/,
  )
  assert.equal(calls, 1)
})

/** A clock that only the injected sleep moves. */
function fakeClock(overrides: Parameters<typeof retryPolicy>[0] = {}) {
  const clock = { now, waits: [] as number[] }
  const policy = retryPolicy({
    now: () => clock.now,
    sleep: async (ms) => {
      clock.waits.push(ms)
      clock.now += ms
    },
    ...overrides,
  })
  return { clock, policy }
}

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })

test('a half-minute outage is survived with the default policy, at the slowest and the fastest jitter', async () => {
  for (const random of [() => 0, () => 1]) {
    const { clock, policy } = fakeClock({ random })
    const downUntil = now + 30_000
    const value = await withRetries(
      'op',
      async () => {
        if (clock.now < downUntil) throw refused()
        return 'up'
      },
      () => true,
      policy,
      memoryLogger(),
    )
    assert.equal(value, 'up')
    assert.ok(clock.now >= downUntil)
  }
})

test('a dead service fails within the time bound, however many retries are allowed, saying so', async () => {
  const { clock, policy } = fakeClock({ retries: 20, random: () => 1 })
  await assert.rejects(
    withRetries(
      'op',
      async () => {
        clock.now += 30_000 // each attempt hangs until its time-out
        throw Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' })
      },
      () => true,
      policy,
      memoryLogger(),
    ),
    /\(gave up after \d+ attempts in \d+ s: retries stop 180 s after the first attempt\)$/,
  )
  assert.ok(clock.now - now <= 180_000 + 30_000, `${clock.now - now} ms`)
  assert.ok(clock.waits.length < 20)
})

test('a retry-after beyond the bound fails at once, saying when the limit lifts', async () => {
  const { clock, policy } = fakeClock({ maxRetryAfterMs: 60_000 })
  let calls = 0
  await assert.rejects(
    withRetries(
      'op',
      async () => {
        calls++
        throw rateLimited(new Date(clock.now + 600_000).toUTCString())
      },
      () => true,
      policy,
      memoryLogger(),
    ),
    (error: Error) => {
      assert.match(
        error.message,
        /429 API_RATE_LIMIT.*\(the service asks to wait 600 s, until 2026-11-21T10:10:00\.000Z: longer than the 60 s allowed; not retried\)$/,
      )
      return true
    },
  )
  assert.equal(calls, 1)
  assert.deepEqual(clock.waits, [])
  // Within the bound it is waited.
  calls = 0
  const waited = await withRetries(
    'op',
    async () => (++calls === 1 ? Promise.reject(rateLimited('60')) : 'ok'),
    () => true,
    fakeClock({ maxRetryAfterMs: 60_000, random: () => 0 }).policy,
    memoryLogger(),
  )
  assert.equal(waited, 'ok')
})

test('an aborted signal ends a wait at once and starts no attempt', async () => {
  const controller = new AbortController()
  const reason = new Error('cancelled')
  // The real sleep, for a minute: the abort must end it (the test would otherwise time out).
  const policy = retryPolicy({ signal: controller.signal })
  let calls = 0
  const run = withRetries(
    'op',
    async () => {
      calls++
      setImmediate(() => controller.abort(reason))
      throw rateLimited('60')
    },
    () => true,
    policy,
    memoryLogger(),
  )
  await assert.rejects(run, (error) => error === reason)
  assert.equal(calls, 1)
  await assert.rejects(
    withRetries(
      'op',
      async () => 'never',
      () => true,
      policy,
      memoryLogger(),
    ),
    (error) => error === reason,
  )
})

test("the backoffStep hook sets each wait's exponent; without it, each failure doubles the wait", async () => {
  for (const [hook, expected] of [
    [undefined, [250, 500, 1000]],
    [() => 0, [250, 250, 250]],
    [(index: number) => (index === 1 ? 0 : index), [250, 250, 1000]],
  ] as const) {
    const waits: number[] = []
    const policy = retryPolicy({ now: () => now, random: () => 0, sleep: async (ms) => void waits.push(ms) })
    let calls = 0
    const value = await withRetries(
      'thing',
      async () => {
        if (++calls <= 3) throw Object.assign(new Error('reset'), { code: 'ECONNRESET' })
        return 'ok'
      },
      () => true,
      policy,
      memoryLogger(),
      { backoffStep: hook },
    )
    assert.equal(value, 'ok')
    assert.deepEqual(waits, expected)
  }
})

test('decideRetry: each branch is a value, and only a retry has a wait', () => {
  const policy = retryPolicy({ retries: 3, maxRetryAfterMs: 60_000, maxElapsedMs: 100_000, random: () => 0 })
  const at = (index: number, elapsedMs = 0) => ({ index, startedAt: now, now: now + elapsedMs })
  const lost = new Error('reset')
  // The caller says no: the error as it is, or saying how its own retries stopped.
  assert.deepEqual(decideRetry(lost, false, at(2), policy), { kind: 'fail', gaveUp: undefined })
  const own = { kind: 'retries-spent', attempts: 3 } as const
  assert.deepEqual(decideRetry(lost, own, at(2), policy), { kind: 'fail', gaveUp: own })
  // A retry after the backoff of its index, or of the backoffStep hook's exponent.
  assert.deepEqual(decideRetry(lost, true, at(0), policy), { kind: 'retry', waitMs: 250 })
  assert.deepEqual(decideRetry(lost, true, at(2), policy), { kind: 'retry', waitMs: 1000 })
  assert.deepEqual(
    decideRetry(lost, true, at(2), policy, () => 0),
    { kind: 'retry', waitMs: 250 },
  )
  // The wait the service asks for, when within the bound.
  assert.deepEqual(decideRetry(rateLimited('30'), true, at(0), policy), { kind: 'retry', waitMs: 30_000 })
  // The retries spent: saying so after more than one attempt, not after a single one.
  assert.deepEqual(decideRetry(lost, true, at(3), policy), {
    kind: 'fail',
    gaveUp: { kind: 'retries-spent', attempts: 4 },
  })
  assert.deepEqual(decideRetry(lost, true, at(0), retryPolicy({ retries: 0 })), {
    kind: 'fail',
    gaveUp: undefined,
  })
  // A wait longer than allowed: not retried, saying until when.
  assert.deepEqual(decideRetry(rateLimited('61'), true, at(0, 5), policy), {
    kind: 'fail',
    gaveUp: { kind: 'wait-too-long', askedMs: 61_000, until: now + 5 + 61_000, maxRetryAfterMs: 60_000 },
  })
  // A retry that would start past maxElapsedMs: not started.
  assert.deepEqual(decideRetry(lost, true, at(1, 99_600), policy), {
    kind: 'fail',
    gaveUp: { kind: 'out-of-time', attempts: 2, elapsedMs: 99_600, maxElapsedMs: 100_000 },
  })
  assert.deepEqual(decideRetry(lost, true, at(1, 99_500), policy), { kind: 'retry', waitMs: 500 })
})

test("a call that gave up fails with a new error: the thrown errors' messages are never changed", async () => {
  const policy = retryPolicy({ retries: 2, sleep: async () => {} })
  const refusal = new ServiceError({ operation: 'op', status: 503, body: { code: 'DOWN', message: 'down' } })
  const lost = new NetworkError('op failed: the connection was reset', { cause: new Error('socket hang up') })
  const plain = new Error('fail')
  for (const thrown of [refusal, lost, plain]) {
    const before = thrown.message
    const error = await withRetries(
      'op',
      () => Promise.reject(thrown),
      () => true,
      policy,
      memoryLogger(),
    ).catch((e: unknown) => e)
    assert.equal(thrown.message, before)
    assert.notEqual(error, thrown)
    assert.ok(error instanceof Error)
    assert.equal(error.message, `${before} (gave up after 3 attempts)`)
    assert.equal(
      errorMessage(error),
      `${before} (gave up after 3 attempts)${thrown === lost ? ': socket hang up' : ''}`,
    )
    // The service's and the network's errors keep their class and fields; any other is the cause.
    if (thrown === refusal) {
      assert.ok(error instanceof ServiceError)
      assert.equal(error.status, 503)
      assert.equal(error.code, 'DOWN')
      assert.deepEqual(error.gaveUp, { kind: 'retries-spent', attempts: 3 })
    } else if (thrown === lost) {
      assert.ok(error instanceof NetworkError)
      assert.equal(error.cause, lost.cause)
      assert.deepEqual(error.gaveUp, { kind: 'retries-spent', attempts: 3 })
    } else assert.equal(error.cause, plain)
  }
})
