import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ServiceError } from '../src/api/errors.ts'
import {
  backoffDelay,
  isConnectFailure,
  isNetworkFailure,
  requestedDelay,
  retryPolicy,
  withRetries,
} from '../src/api/retry.ts'
import { memoryLogger } from '../src/logger.ts'

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
  assert.match(logger.lines[0]!, /^thing: 429 API_RATE_LIMIT; retry 1 of 5 in 2\.0 s$/)
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
