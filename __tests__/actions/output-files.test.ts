// An output file that cannot hold what is written to it is named, with what it could not hold: node's
// own error (ENOSPC, ENOENT) names neither. The deploy's account of such a run:
// __tests__/bundles/failures.test.ts.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import { OutputFileError, setOutputs } from '../../src/actions/action.ts'

test('a full disk under GITHUB_OUTPUT: an error naming it, every output refused, and the cause', () => {
  const full = '/dev/full'
  if (!existsSync(full)) return
  const before = process.env.GITHUB_OUTPUT
  process.env.GITHUB_OUTPUT = full
  try {
    assert.throws(
      () => setOutputs({ 'site-id': 'a', url: null }),
      (error: unknown) =>
        error instanceof OutputFileError &&
        error.message.startsWith(`GITHUB_OUTPUT (${full}) could not hold the outputs site-id, url: ENOSPC`) &&
        (error.cause as NodeJS.ErrnoException).code === 'ENOSPC',
    )
  } finally {
    if (before === undefined) delete process.env.GITHUB_OUTPUT
    else process.env.GITHUB_OUTPUT = before
  }
})
