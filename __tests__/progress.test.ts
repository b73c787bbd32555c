import assert from 'node:assert/strict'
import { test } from 'node:test'
import { formatBytes } from '../src/format.ts'
import { memoryLogger } from '../src/logger.ts'
import { createProgress } from '../src/progress.ts'

const MiB = 1024 * 1024

test('progress lines count finished files, bytes, rate and ETA', () => {
  let clock = 0
  const logger = memoryLogger()
  const progress = createProgress({
    files: 2,
    bytes: 40 * MiB,
    partsPerFile: new Map([
      ['big', 2],
      ['small', 1],
    ]),
    logger,
    now: () => clock,
    intervalMs: 60_000,
  })
  clock = 2000
  progress.addBytes(10 * MiB)
  progress.partDone('big')
  progress.addBytes(10 * MiB)
  progress.addBytes(-5 * MiB) // a failed attempt gives its bytes back
  progress.partDone('small')
  progress.stop()
  assert.deepEqual(logger.lines, ['Uploaded files 1/2, 15.0 MiB/40.0 MiB, 7.5 MiB/s, ETA 4 s'])
})

test('byte sizes use the unit that fits', () => {
  assert.equal(formatBytes(0), '0 B')
  assert.equal(formatBytes(1023), '1023 B')
  assert.equal(formatBytes(2285), '2.2 KiB')
  assert.equal(formatBytes(700 * MiB), '700.0 MiB')
  assert.equal(formatBytes(3 * 1024 * MiB), '3.0 GiB')
})
