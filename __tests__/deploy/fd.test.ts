import assert from 'node:assert/strict'
import { fstatSync } from 'node:fs'
import { symlink } from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import {
  SYNC_CALL_LIMIT_MS,
  SYNC_CALL_WINDOW,
  SyncWhileFast,
  closeFile,
  inodeCalls,
  lstatFile,
  openForReading,
  readAt,
} from '../../src/deploy/fd.ts'
import { tempDir, writeTree } from '../support/helpers.ts'

/** A clock that each call moves on by the duration it is given. */
function timedCalls(gate: SyncWhileFast, clock: { now: number }, durations: number[]): void {
  for (const ms of durations) gate.time(() => (clock.now += ms))
}

describe('SyncWhileFast', () => {
  it('stays synchronous while the median call of each window is under the limit, whatever a few calls take', () => {
    const clock = { now: 0 }
    const gate = new SyncWhileFast(0.1, 8, () => clock.now)
    // Three windows, each with calls a collection or the scheduler made long, under half of it.
    for (let window = 0; window < 3; window++) {
      timedCalls(gate, clock, [0.01, 0.02, 40, 0.01, 15, 0.03, 0.01, 9])
      assert.equal(gate.synchronous, true, `window ${window}`)
    }
  })

  it('gives them up for good after a window whose median call is over the limit, and not before its end', () => {
    const clock = { now: 0 }
    const gate = new SyncWhileFast(0.1, 8, () => clock.now)
    timedCalls(gate, clock, [0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01])
    timedCalls(gate, clock, [0.5, 0.4, 0.6, 0.5, 0.01, 0.3, 0.01, 0.01].slice(0, 7))
    assert.equal(gate.synchronous, true, 'the window is not over yet')
    timedCalls(gate, clock, [0.01])
    assert.equal(gate.synchronous, false)
    timedCalls(
      gate,
      clock,
      Array.from({ length: 16 }, () => 0.001),
    )
    assert.equal(gate.synchronous, false, 'fast calls later do not bring them back')
  })

  it('counts the time of a call that throws, and passes its error on', () => {
    const clock = { now: 0 }
    const gate = new SyncWhileFast(0.1, 2, () => clock.now)
    const failing = () => {
      clock.now += 1
      throw new Error('EIO')
    }
    assert.throws(() => gate.time(failing), /EIO/)
    assert.throws(() => gate.time(failing), /EIO/)
    assert.equal(gate.synchronous, false)
  })
})

describe('file descriptors', () => {
  it('stat, open, read and close a file and reject a missing one, synchronously, then through the thread pool once those calls are slow', async () => {
    const root = await tempDir()
    await writeTree(root, { 'a.txt': 'hello world' })
    const file = path.join(root, 'a.txt')
    const readWhole = async () => {
      const fd = await openForReading(file)
      try {
        const buffer = Buffer.alloc(11)
        assert.equal(await readAt(fd, buffer, 0, 11, 0), 11)
        assert.equal(fstatSync(fd).size, 11)
        return buffer.toString()
      } finally {
        await closeFile(fd)
      }
    }
    const missing = path.join(root, 'missing.txt')
    await symlink(file, path.join(root, 'link'))
    const everyCall = async () => {
      assert.equal(await readWhole(), 'hello world')
      assert.equal((await lstatFile(file)).size, 11)
      assert.equal((await lstatFile(path.join(root, 'link'))).isSymbolicLink(), true)
      await assert.rejects(lstatFile(missing), { code: 'ENOENT' })
      await assert.rejects(openForReading(missing), { code: 'ENOENT' })
      await assert.rejects(closeFile(2 ** 30), { code: 'EBADF' })
    }
    assert.equal(inodeCalls.synchronous, true)
    await everyCall()
    // A window of calls slower than the limit, as on a network file system.
    for (let i = 0; i < SYNC_CALL_WINDOW; i++) {
      inodeCalls.time(() => {
        const until = performance.now() + SYNC_CALL_LIMIT_MS * 2
        while (performance.now() < until);
      })
    }
    assert.equal(inodeCalls.synchronous, false)
    await everyCall()
  })
})
