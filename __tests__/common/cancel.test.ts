// Cancellation handles what each platform sends: SIGINT and SIGTERM everywhere, and Windows' SIGBREAK
// (Ctrl-Break), so that a run cancelled there still ends with its account.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { cancelOnSignals, cancelSignals, isCancelled } from '../../src/common/cancel.ts'

test('Windows adds SIGBREAK to the signals that cancel a run; Linux and macOS do not have it', () => {
  assert.deepEqual(cancelSignals('win32'), ['SIGINT', 'SIGTERM', 'SIGBREAK'])
  assert.deepEqual(cancelSignals('linux'), ['SIGINT', 'SIGTERM'])
  assert.deepEqual(cancelSignals('darwin'), ['SIGINT', 'SIGTERM'])
})

test('a SIGBREAK cancels the run on Windows, naming it; another one calls again', () => {
  const again: string[] = []
  const cancellation = cancelOnSignals(cancelSignals('win32'), (signal) => again.push(signal))
  try {
    process.emit('SIGBREAK', 'SIGBREAK')
    assert.ok(cancellation.signal.aborted)
    const reason: unknown = cancellation.signal.reason
    assert.ok(isCancelled(reason))
    assert.equal(reason.by, 'SIGBREAK')
    process.emit('SIGBREAK', 'SIGBREAK')
    assert.deepEqual(again, ['SIGBREAK'])
  } finally {
    cancellation.dispose()
  }
  assert.equal(process.listenerCount('SIGBREAK'), 0)
})
