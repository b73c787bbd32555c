// The Run every operation opens: its time limits, its pool, its deadline and its clock.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { Agent } from 'undici'
import { CancelledError } from '../../src/common/cancel.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { RunDeadlineError, openRun, type RunOptions } from '../../src/api/run.ts'
import { timeoutsFor } from '../../src/common/timeouts.ts'
import { DEFAULT_REQUEST_TIMEOUT_SECONDS } from '../../src/inputs/constants.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'

/** Records which of close() and destroy() ends `pool`. */
function spy(pool: Agent): string[] {
  const calls: string[] = []
  for (const name of ['close', 'destroy'] as const) {
    const original = (pool[name] as (...args: unknown[]) => unknown).bind(pool)
    // undici's promise form calls the callback form: count the outer call only.
    Object.assign(pool, {
      [name]: (...args: unknown[]) => {
        if (!args.some((arg) => typeof arg === 'function')) calls.push(name)
        return original(...args)
      },
    })
  }
  return calls
}

/** A service on 127.0.0.1 that reads every request and never answers it. */
describe('a Run', () => {
  let url: string
  const held: IncomingMessage[] = []
  const server = createServer((req) => {
    req.resume()
    held.push(req)
  })
  before(async () => {
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  after(() => {
    server.closeAllConnections()
    server.close()
  })
  const open = (options: Partial<RunOptions> = {}) =>
    openRun({ connection: { apiUrl: url, token: 't' }, logger: memoryLogger(), ...options })
  /** Resolves once the service holds one more request than `count`. */
  const arrived = async (count: number) => {
    while (held.length <= count) await new Promise((resolve) => setTimeout(resolve, 5))
  }

  test('its time limits are computed once, from request-timeout (the input default when none is given)', async () => {
    const run = open({ requestTimeoutMs: 90_000 })
    const expected = timeoutsFor(90_000)
    assert.equal(run.timeouts.stallMs, 90_000)
    assert.equal(run.timeouts.apiStallMs, expected.apiStallMs)
    assert.equal(run.timeouts.apiDeadlineMs, expected.apiDeadlineMs)
    assert.equal(run.timeouts.apiDeadlineMs, 99_000, 'the API stall limit and a tenth more')
    assert.equal(run.timeouts.putDeadlineMs(0), expected.putDeadlineMs(0))
    assert.equal(run.timeouts, run.timeouts, 'the same object each time')
    await run.dispose()
    const byDefault = open()
    assert.equal(byDefault.timeouts.stallMs, DEFAULT_REQUEST_TIMEOUT_SECONDS * 1000)
    assert.equal(byDefault.timeouts.apiStallMs, 60_000, "never shorter than the service's own limit")
    assert.equal(byDefault.timeouts.apiDeadlineMs, 66_000, "a little after the service's own 50 s")
    await byDefault.dispose()
  })

  test('its client waits on the API stall limit of its Timeouts', async () => {
    const run = open({
      timeouts: { ...timeoutsFor(1000), apiStallMs: 100 },
      retry: { retries: 0 },
    })
    try {
      const started = Date.now()
      await assert.rejects(
        run.client.listCustomAvatars(GAME),
        /no answer within 0\.1 s \(UND_ERR_HEADERS_TIMEOUT\)/,
      )
      assert.ok(Date.now() - started < 5000)
    } finally {
      await run.dispose()
    }
  })

  test('dispose closes the pool the run made, and never one it was given', async () => {
    const given = new Agent()
    const lent = open({ dispatcher: given })
    assert.equal(lent.dispatcher, given)
    await lent.dispose()
    assert.equal(given.closed, false, 'the given pool is left open')
    assert.equal(given.destroyed, false)
    await given.close()

    const own = open()
    const pool = own.dispatcher as Agent
    assert.notEqual(pool, given)
    assert.equal(own.dispatcher, pool, 'one pool per run')
    const ended = spy(pool)
    await own.dispose()
    assert.equal(pool.closed, true, 'its own pool is closed')
    assert.equal(ended[0], 'close', `closed, not destroyed: the run was not aborted (${ended.join(', ')})`)

    const idle = open()
    await idle.dispose() // a run that never called the service made no pool: nothing to close
  })

  test('an aborted run destroys its pool: the call in flight is not waited for', async () => {
    const controller = new AbortController()
    const run = open({ signal: controller.signal })
    const count = held.length
    const call = run.client.listCustomAvatars(GAME)
    await arrived(count)
    const ended = spy(run.dispatcher as Agent)
    controller.abort(new CancelledError('SIGINT'))
    await assert.rejects(call, CancelledError)
    await run.dispose()
    assert.equal(ended[0], 'destroy', ended.join(', '))
  })

  test('its deadline aborts its signal, and the call in flight, with an error naming what ran out', async () => {
    const run = open({ deadlineMs: 150, name: 'servers run' })
    const count = held.length
    const started = Date.now()
    try {
      await assert.rejects(run.client.listCustomAvatars(GAME), (error: Error) => {
        assert.ok(error instanceof RunDeadlineError)
        assert.equal(error.name, 'TimeoutError')
        assert.equal(
          error.message,
          'The servers run ran out of time: it did not finish within its deadline of 0.15 s',
        )
        return true
      })
      assert.ok(held.length > count, 'the call was in flight')
      assert.ok(run.signal.aborted)
      assert.ok(run.signal.reason instanceof RunDeadlineError)
      assert.ok(Date.now() - started < 5000)
    } finally {
      await run.dispose()
    }
  })

  test('a cancellation reaches its signal; dispose stops the deadline', async () => {
    const controller = new AbortController()
    const run = open({ signal: controller.signal, deadlineMs: 50 })
    await run.dispose()
    await new Promise((resolve) => setTimeout(resolve, 100))
    assert.equal(run.signal.aborted, false, 'a disposed run is not aborted by its deadline')
    controller.abort(new CancelledError('SIGTERM'))
    assert.ok(run.signal.reason instanceof CancelledError)
  })

  test('its clock is injectable, and is the retry policy’s', async () => {
    let now = 1_000
    const run = open({ clock: { now: () => now } })
    assert.equal(run.clock.now(), 1_000)
    now = 4_500
    assert.equal(run.clock.now(), 4_500)
    assert.equal(run.retry.now(), 4_500)
    assert.equal(run.retry.signal, run.signal, 'the retries stop with the run')
    await run.dispose()
  })

  test('await using disposes it', async () => {
    let pool: Agent | undefined
    {
      await using run = open()
      pool = run.dispatcher as Agent
    }
    assert.equal(pool.closed, true)
  })
})
