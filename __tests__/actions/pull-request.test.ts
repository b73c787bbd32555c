// The pull request a workflow_run deploy is for is read from GitHub in bounded time: a GitHub that
// never answers fails the step saying so, it never holds it.
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, test } from 'node:test'

let calls = 0
const server = createServer(() => void calls++) // never answers
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
after(() => {
  server.closeAllConnections()
  server.close()
})
process.env.GITHUB_API_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
const { checkPullRequest } = await import('../../src/actions/github.ts')

test('a GitHub that never answers fails the pull request check within its time-out, saying so', async () => {
  await assert.rejects(
    checkPullRequest({
      token: 't',
      repository: 'studio/game',
      number: 12,
      build: { repository: 'fork/game', branch: 'feature' },
      timeoutMs: 200,
    }),
    /^Error: Could not read pull request #12 to check it is the one this build ran for: no answer from GitHub within 0\.2 s$/,
  )
  // Asked once, never again. Whether the request reached this server within the 0.2 s is the machine's
  // load, not the check's doing: a busy machine may time it out before it connects.
  assert.ok(calls <= 1, `${calls} calls`)
})
