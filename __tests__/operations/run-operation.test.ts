// runOperation: the Run an operation gets, its deadline, and what a stopped operation says.
import assert from 'node:assert/strict'
import { mock, test } from 'node:test'
import { NetworkError, UsageError } from '../../src/api/errors.ts'
import { CancelledError } from '../../src/common/cancel.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { RunDeadlineError, type Run } from '../../src/api/run.ts'
import type { Connection } from '../../src/inputs/common.ts'
import { deadPort } from '../support/helpers.ts'
import { OPERATION_DEADLINE_MS } from '../../src/common/timeouts.ts'
import {
  OperationStoppedError,
  deadlineFromEnv,
  runOperation,
  type Operation,
} from '../../src/operations/operation.ts'

const inputs: Connection = { apiUrl: 'http://127.0.0.1:1', token: 't', gameId: 'g' }

/** An operation that notes a step, then waits for its run's signal (as a call in flight would). */
function waiting(runs: Run[] = []): Operation<Connection, never> {
  return {
    name: 'servers',
    read: () => inputs,
    run: (_inputs, run, journal) => {
      runs.push(run)
      journal.push('page 1 listed')
      return new Promise((_resolve, reject) =>
        run.signal.addEventListener('abort', () => reject(run.signal.reason as Error)),
      )
    },
    outputs: () => ({}),
    report: () => ({ title: '', blocks: [] }),
  }
}

test('a cancelled operation fails saying so, what it did, and that it changed nothing', async () => {
  const controller = new AbortController()
  const running = runOperation(waiting(), inputs, { logger: memoryLogger(), signal: controller.signal })
  controller.abort(new CancelledError('SIGINT'))
  await assert.rejects(running, (error: unknown) => {
    assert.ok(error instanceof OperationStoppedError)
    assert.ok(error.cause instanceof CancelledError)
    assert.equal(
      error.message,
      'The run was cancelled (SIGINT): servers stopped after: page 1 listed. It only reads: nothing was changed.',
    )
    return true
  })
})

test('an operation has a deadline of OPERATION_DEADLINE_MS unless told another', async (t) => {
  t.after(() => mock.timers.reset())
  mock.timers.enable({ apis: ['setTimeout'] })
  const runs: Run[] = []
  const running = runOperation(waiting(runs), inputs, { logger: memoryLogger() })
  const settled = running.catch((error: unknown) => error)
  mock.timers.tick(OPERATION_DEADLINE_MS - 1)
  assert.equal(runs[0]!.signal.aborted, false)
  mock.timers.tick(1)
  const error = await settled
  assert.ok(error instanceof OperationStoppedError)
  assert.ok(error.cause instanceof RunDeadlineError)
  assert.equal(
    error.message,
    'The servers run ran out of time: it did not finish within its deadline of 10 min: servers stopped after: page 1 listed. ' +
      'It only reads: nothing was changed.',
  )
})

test('an error of its own is thrown as it is, and the run is disposed', async () => {
  const refused = new UsageError('namespace-id is not a namespace of the game')
  const runs: Run[] = []
  const operation: Operation<Connection, never> = {
    ...waiting(),
    run: (_inputs, run) => {
      runs.push(run)
      void run.dispatcher // the run's own pool, made here
      return Promise.reject(refused)
    },
  }
  await assert.rejects(
    runOperation(operation, inputs, { logger: memoryLogger() }),
    (error) => error === refused,
  )
  assert.equal((runs[0]!.dispatcher as { closed?: boolean }).closed, true, 'its pool is closed')
})

test('GAMEHOST_DEADLINE_SECONDS: a number of seconds above 0, or nothing', () => {
  assert.equal(deadlineFromEnv({}), undefined)
  assert.equal(deadlineFromEnv({ GAMEHOST_DEADLINE_SECONDS: ' ' }), undefined)
  assert.equal(deadlineFromEnv({ GAMEHOST_DEADLINE_SECONDS: '2' }), 2000)
  assert.equal(deadlineFromEnv({ GAMEHOST_DEADLINE_SECONDS: '0.5' }), 500)
  for (const bad of ['0', '-1', 'ten', '1e3'])
    assert.throws(
      () => deadlineFromEnv({ GAMEHOST_DEADLINE_SECONDS: bad }),
      new UsageError(`GAMEHOST_DEADLINE_SECONDS '${bad}' is not a number of seconds above 0`),
    )
})

test("an operation's client names the input a failure points at, as the face names it", async () => {
  const port = await deadPort()
  const operation: Operation<Connection, never> = {
    ...waiting(),
    run: async (_inputs, run) => {
      await run.client.getGame('g')
      throw new Error('a dead port answered')
    },
  }
  const error = await runOperation(
    operation,
    { ...inputs, apiUrl: `http://127.0.0.1:${port}` },
    { logger: memoryLogger(), retry: { sleep: async () => {} } },
  ).catch((e: unknown) => e)
  assert.ok(error instanceof NetworkError, String(error))
  assert.deepEqual(error.inputs, ['api-url'])
  assert.match(error.message, /nothing at api-url has answered in this run; check api-url/)
})
