import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { test } from 'node:test'
import { SMALL_HEAP_FLAGS } from '../src/memory.ts'

// setFlagsFromString ignores a flag V8 no longer has (it only prints to stderr), and the deploy's
// memory would quietly grow: the runtime that runs the tests must still take every flag.
test('V8 still knows the flags that keep the heap small', () => {
  const run = spawnSync(process.execPath, [...SMALL_HEAP_FLAGS, '-e', '0'], { encoding: 'utf8' })
  assert.equal(run.stderr, '')
  assert.equal(run.status, 0)
})
