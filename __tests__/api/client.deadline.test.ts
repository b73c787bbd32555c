// Every API call has a deadline in all, beside the stall timeouts (headersTimeout, bodyTimeout) that
// each byte re-arms: an answer that trickles a byte at a time cannot hold a run.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, test } from 'node:test'
import { ServiceClient } from '../../src/api/client.ts'
import { createAgent } from '../../src/api/http.ts'
import { NetworkError } from '../../src/api/errors.ts'
import { retryPolicy } from '../../src/common/retry.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { SERVICE_REQUEST_LIMIT_MS, timeoutsFor } from '../../src/common/timeouts.ts'

const UPLOAD = '0b8d4e2a-7c61-4f39-9a5e-3d2c1b0f6e87'
const agent = createAgent()
after(() => agent.close())

/**
 * A service on 127.0.0.1 that answers every call 200 with `{}`, trickled a byte every `everyMs` after
 * `padding` spaces (it stops by itself once sent), and counts the calls and the answers sent whole.
 */
async function tricklingService(
  padding = 100,
  everyMs = 30,
): Promise<{ url: string; calls: () => number; whole: () => number }> {
  let calls = 0
  let whole = 0
  const answers = new Set<ServerResponse>()
  const server = createServer((req, res) => {
    calls++
    req.resume()
    res.writeHead(200, { 'content-type': 'application/json' })
    answers.add(res)
    const body = `{${' '.repeat(padding)}}`
    let sent = 0
    const timer = setInterval(() => {
      res.write(body[sent++]!)
      if (sent === body.length) {
        clearInterval(timer)
        whole++
        res.end()
      }
    }, everyMs)
    res.on('close', () => {
      clearInterval(timer)
      answers.delete(res)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  after(() => {
    server.closeAllConnections()
    server.close()
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: () => calls,
    whole: () => whole,
  }
}

test('an answer that trickles a byte at a time fails at the call deadline, naming it, though no byte is late', async () => {
  const service = await tricklingService()
  const logger = memoryLogger()
  const client = new ServiceClient({
    baseUrl: service.url,
    token: 'token',
    dispatcher: agent,
    logger,
    retry: retryPolicy({ retries: 1, sleep: async () => {} }),
    timeouts: { apiStallMs: 200, apiDeadlineMs: 500 },
  })
  const error = await client.completeUpload(UPLOAD).catch((e: unknown) => e)
  assert.ok(error instanceof NetworkError, String(error))
  assert.match(
    error.message,
    /^uploads\.complete failed: the answer was not complete within 0\.5 s, the deadline of an API call \(GAMEHOST_DEADLINE_EXCEEDED\) \(127\.0\.0\.1:\d+\) \(gave up after 2 attempts\)$/,
  )
  assert.equal(service.calls(), 2, 'a read past its deadline is retried like a lost connection')
  // Decided on events, not on the clock: no answer's 3 s trickle had ended when the client gave up.
  assert.equal(service.whole(), 0, 'each call was dropped before its answer ended')
})

test('a call that creates something is not retried past its deadline: it may have been done', async () => {
  const service = await tricklingService()
  const client = new ServiceClient({
    baseUrl: service.url,
    token: 'token',
    dispatcher: agent,
    logger: memoryLogger(),
    retry: retryPolicy({ sleep: async () => {} }),
    timeouts: { apiStallMs: 200, apiDeadlineMs: 300 },
  })
  await assert.rejects(
    client.createVersion('4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86', { display_name: 'v', config: {} }),
    /^NetworkError: games\.versions\.createGameVersion failed: the answer was not complete within 0\.3 s/,
  )
  // Never sent twice. On a busy machine the one call may not even have reached the service within 0.3 s.
  assert.ok(service.calls() <= 1, `${service.calls()} calls`)
})

test('an answer that arrives within the deadline is read as ever, and the deadline is more than the service’s 50 s', async () => {
  const service = await tricklingService(3)
  const client = new ServiceClient({
    baseUrl: service.url,
    token: 'token',
    dispatcher: agent,
    logger: memoryLogger(),
    retry: retryPolicy({ retries: 0 }),
    timeouts: { apiStallMs: 200, apiDeadlineMs: 2000 },
  })
  await client.completeUpload(UPLOAD)
})

test("the deadline follows the service's own limit and request-timeout: a little after them, not minutes", () => {
  const byDefault = timeoutsFor(30_000)
  assert.ok(byDefault.apiDeadlineMs > 50_000, "more than the service's 50 s")
  assert.ok(
    byDefault.apiDeadlineMs <= 70_000,
    `${byDefault.apiDeadlineMs} ms: a dead answer is dropped at about 60 s`,
  )
  assert.equal(timeoutsFor(30_000).apiStallMs, SERVICE_REQUEST_LIMIT_MS)
  const longer = timeoutsFor(120_000)
  assert.ok(longer.apiDeadlineMs > 120_000 && longer.apiDeadlineMs <= 140_000, String(longer.apiDeadlineMs))
})

test('an answer that trickles a byte every 2 s (here 20 ms, every limit scaled down) is dropped a little after the service limit', async () => {
  // Scaled by 1/100: a service limit of 0.6 s for 60 s, a byte every 20 ms for every 2 s, 30 s of trickle.
  const service = await tricklingService(1500, 20)
  const timeouts = timeoutsFor(300, 600)
  const client = new ServiceClient({
    baseUrl: service.url,
    token: 'token',
    dispatcher: agent,
    logger: memoryLogger(),
    retry: retryPolicy({ retries: 0 }),
    timeouts,
  })
  await assert.rejects(client.completeUpload(UPLOAD), /the answer was not complete within 0\.66 s/)
  assert.equal(service.whole(), 0, 'dropped at about 0.66 s, not after the whole 30 s trickle')
})
