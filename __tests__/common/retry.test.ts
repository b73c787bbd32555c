import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  errorMessage,
  NetworkError,
  requestedDelay,
  retryVerdict,
  ServiceError,
} from '../../src/api/errors.ts'
import {
  backoffDelay,
  decideRetry,
  retryPolicy,
  withRetries,
  type Classifier,
} from '../../src/common/retry.ts'
import {
  isConnectFailure,
  isNetworkFailure,
  isOutOfDescriptors,
  isUnreachable,
  networkFailure,
} from '../../src/common/network.ts'
import { memoryLogger } from '../../src/common/logger.ts'

const now = Date.parse('2026-11-21T10:00:00Z')

/** A caller's classifier: everything retried, after the wait the service asks for when it asks. */
const asks: Classifier = (error, at) => retryVerdict(true, error, at)

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
    asks,
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
      asks,
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
      asks,
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
      asks,
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
      asks,
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
    asks,
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
    asks,
    policy,
    memoryLogger(),
  )
  await assert.rejects(run, (error) => error === reason)
  assert.equal(calls, 1)
  await assert.rejects(
    withRetries('op', async () => 'never', asks, policy, memoryLogger()),
    (error) => error === reason,
  )
})

test('decideRetry: each branch is a value, and only a retry has a wait', () => {
  const policy = retryPolicy({ retries: 3, maxRetryAfterMs: 60_000, maxElapsedMs: 100_000, random: () => 0 })
  const at = (index: number, elapsedMs = 0) => ({ index, startedAt: now, now: now + elapsedMs })
  // The caller says no: the error as it is, or saying how its own retries stopped.
  assert.deepEqual(decideRetry(false, at(2), policy), { kind: 'fail', gaveUp: undefined })
  const own = { kind: 'retries-spent', attempts: 3 } as const
  assert.deepEqual(decideRetry(own, at(2), policy), { kind: 'fail', gaveUp: own })
  // A retry after the backoff of its index.
  assert.deepEqual(decideRetry(true, at(0), policy), { kind: 'retry', waitMs: 250 })
  assert.deepEqual(decideRetry(true, at(2), policy), { kind: 'retry', waitMs: 1000 })
  // The wait the caller's classifier read from the failure (retry-after), when within the bound.
  assert.deepEqual(decideRetry({ afterMs: 30_000 }, at(0), policy), { kind: 'retry', waitMs: 30_000 })
  // The retries spent: saying so after more than one attempt, not after a single one.
  assert.deepEqual(decideRetry(true, at(3), policy), {
    kind: 'fail',
    gaveUp: { kind: 'retries-spent', attempts: 4 },
  })
  assert.deepEqual(decideRetry(true, at(0), retryPolicy({ retries: 0 })), {
    kind: 'fail',
    gaveUp: undefined,
  })
  // A wait longer than allowed: not retried, saying until when.
  assert.deepEqual(decideRetry({ afterMs: 61_000 }, at(0, 5), policy), {
    kind: 'fail',
    gaveUp: { kind: 'wait-too-long', askedMs: 61_000, until: now + 5 + 61_000, maxRetryAfterMs: 60_000 },
  })
  // A retry that would start past maxElapsedMs: not started.
  assert.deepEqual(decideRetry(true, at(1, 99_600), policy), {
    kind: 'fail',
    gaveUp: { kind: 'out-of-time', attempts: 2, elapsedMs: 99_600, maxElapsedMs: 100_000 },
  })
  assert.deepEqual(decideRetry(true, at(1, 99_500), policy), { kind: 'retry', waitMs: 500 })
  // A deadline shared by calls: no retry starts past it, however young the call.
  const budget = retryPolicy({ ...policy, deadlineAt: now + 1_000 })
  assert.deepEqual(decideRetry(true, at(0, 800), budget), {
    kind: 'fail',
    gaveUp: { kind: 'out-of-time', attempts: 1, elapsedMs: 800, maxElapsedMs: 1_000 },
  })
  assert.deepEqual(decideRetry(true, at(0, 700), budget), { kind: 'retry', waitMs: 250 })
})

test('one classifier of network failures: TLS, DNS, refused, reset, out of descriptors', () => {
  const failing = (code: string) =>
    new Error('fetch failed', { cause: Object.assign(new Error(code), { code }) })
  const kinds = [
    ['CERT_HAS_EXPIRED', 'tls'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'tls'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'tls'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'tls'],
    ['ENOTFOUND', 'dns'],
    ['EAI_AGAIN', 'dns-again'],
    ['ECONNREFUSED', 'refused'],
    ['UND_ERR_CONNECT_TIMEOUT', 'refused'],
    ['ECONNRESET', 'lost'],
    ['UND_ERR_SOCKET', 'lost'],
    ['EMFILE', 'descriptors'],
    ['ENFILE', 'descriptors'],
  ] as const
  for (const [code, kind] of kinds) assert.deepEqual(networkFailure(failing(code)), { kind, code }, code)
  assert.equal(networkFailure(new Error('plain')), undefined)
  // A refused certificate or a name that does not resolve is unreachable, and no retry fixes it.
  for (const code of ['CERT_HAS_EXPIRED', 'ENOTFOUND']) {
    assert.ok(isUnreachable(failing(code)) && !isNetworkFailure(failing(code)), code)
  }
  assert.ok(isUnreachable(failing('ECONNREFUSED')) && !isUnreachable(failing('ECONNRESET')))
  assert.ok(isOutOfDescriptors(failing('EMFILE')) && !isOutOfDescriptors(failing('ECONNRESET')))
})

test("a call that gave up fails with a new error: the thrown errors' messages are never changed", async () => {
  const policy = retryPolicy({ retries: 2, sleep: async () => {} })
  const refusal = new ServiceError({ operation: 'op', status: 503, body: { code: 'DOWN', message: 'down' } })
  const lost = new NetworkError('op failed: the connection was reset', { cause: new Error('socket hang up') })
  const plain = new Error('fail')
  for (const thrown of [refusal, lost, plain]) {
    const before = thrown.message
    const error = await withRetries('op', () => Promise.reject(thrown), asks, policy, memoryLogger()).catch(
      (e: unknown) => e,
    )
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
