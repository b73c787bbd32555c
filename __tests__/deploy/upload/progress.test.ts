import assert from 'node:assert/strict'
import { test } from 'node:test'
import { formatBytes } from '../../../src/common/format.ts'
import { memoryLogger } from '../../../src/common/logger.ts'
import { createProgress } from '../../../src/deploy/upload/progress.ts'

const MiB = 1024 * 1024

test('progress lines count finished files, bytes, rate and ETA', () => {
  let clock = 0
  const logger = memoryLogger()
  const progress = createProgress({
    files: 2,
    bytes: 40 * MiB,
    logger,
    now: () => clock,
    intervalMs: 60_000,
  })
  clock = 2000
  progress.addBytes(10 * MiB)
  progress.partDone('big', 2)
  progress.addBytes(10 * MiB)
  progress.addBytes(-5 * MiB) // a failed attempt gives its bytes back
  progress.partDone('small', 1)
  progress.stop()
  assert.deepEqual(logger.lines, ['Uploaded files 1/2, 15.0 MiB/40.0 MiB, 7.5 MiB/s, ETA 4 s'])
})

test('the ETA counts files too: many small files left after the big one are not "ETA 0 s"', () => {
  let clock = 0
  const logger = memoryLogger()
  const progress = createProgress({
    files: 1001,
    bytes: 10 * MiB + 1000 * 100,
    logger,
    now: () => clock,
    intervalMs: 60_000,
  })
  clock = 2000
  progress.addBytes(10 * MiB)
  progress.partDone('big', 1)
  for (let i = 0; i < 10; i++) {
    progress.addBytes(100)
    progress.partDone(`small-${i}`, 1)
  }
  progress.stop()
  // By bytes 97 KiB are left at 5 MiB/s (under a second); by files 990 are left at 5.5 a second.
  assert.deepEqual(logger.lines, ['Uploaded files 11/1001, 10.0 MiB/10.1 MiB, 5.0 MiB/s, ETA 3 min 0 s'])
})

test('a file sent in parts is done with its last part, in whatever order its parts end', () => {
  const logger = memoryLogger()
  const progress = createProgress({ files: 3, bytes: 6, logger, now: () => 1000, intervalMs: 60_000 })
  progress.partDone('a', 3)
  progress.partDone('b', 2)
  progress.partDone('a', 3)
  progress.partDone('c', 1)
  progress.partDone('b', 2)
  progress.stop()
  assert.match(logger.lines[0]!, /^Uploaded files 2\/3,/)
  progress.partDone('a', 3)
  progress.stop()
  assert.match(logger.lines[1]!, /^Uploaded files 3\/3,/)
})

test('byte sizes use the unit that fits', () => {
  assert.equal(formatBytes(0), '0 B')
  assert.equal(formatBytes(1023), '1023 B')
  assert.equal(formatBytes(2285), '2.2 KiB')
  assert.equal(formatBytes(700 * MiB), '700.0 MiB')
  assert.equal(formatBytes(3 * 1024 * MiB), '3.0 GiB')
})
