// The preview comment never holds a deploy up for long: each GitHub call has a time-out and a retry or
// two, all of them a budget, and the warning gives the true reason. A server of our own answers as
// GitHub does when it is slow or failing.
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { githubVerdict, stickyComment, type GitHubBounds } from '../../src/actions/comment.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { GitHubAnswerError, GitHubConnectionError } from '../../src/operations/github-client.ts'

describe('GitHub calls of the preview comment are bounded', () => {
  let answer: (request: IncomingMessage, response: ServerResponse) => void = () => {}
  let calls = 0
  // Who the token is (GET /user) always answers at once: the calls counted and made slow are the comment's own.
  const server = createServer((request, response) => {
    if (request.url === '/user') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"login":"github-actions[bot]"}')
      return
    }
    calls++
    answer(request, response)
  })
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    process.env.GITHUB_API_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  const json = (status: number, body: unknown) => (_request: IncomingMessage, response: ServerResponse) =>
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  const comment = (bounds: Partial<GitHubBounds>) => {
    calls = 0
    const logger = memoryLogger()
    const sticky = stickyComment({
      token: 't',
      repository: 'studio/game',
      issue: 5,
      key: 'k',
      logger,
      bounds: { retryDelayMs: 1, ...bounds },
    })
    return { sticky, logger }
  }
  const warnings = (logger: ReturnType<typeof memoryLogger>) =>
    logger.lines.filter((l) => l.startsWith('warning'))

  test('a GitHub that never answers: each call times out, is tried three times, and the warning says so', async () => {
    answer = () => {} // never answers
    const { sticky, logger } = comment({ callTimeoutMs: 50, retries: 2 })
    assert.equal(await sticky.load(), undefined)
    // The warning counts the attempts; how many reached this server within 0.05 s each is the load's doing.
    assert.ok(calls <= 3, `${calls} calls`)
    assert.deepEqual(warnings(logger), [
      'warning: Could not read the comments of #5: no answer from GitHub within 0.05 s (3 attempts)',
    ])
  })

  test('a time-out is not a permissions problem; a 403 is', async () => {
    answer = () => {}
    const slow = comment({ callTimeoutMs: 50, retries: 0 })
    await slow.sticky.save('body')
    const [warning] = warnings(slow.logger)
    assert.match(
      warning!,
      /^warning: Could not comment on #5: no answer from GitHub within 0\.05 s\. The deploy itself is fine\.$/,
    )

    answer = (request, response) =>
      request.method === 'GET'
        ? json(200, [])(request, response)
        : json(403, { message: 'Resource not accessible by integration' })(request, response)
    const refused = comment({ callTimeoutMs: 1000 })
    await refused.sticky.save('body')
    assert.match(
      warnings(refused.logger)[0]!,
      /403 Resource not accessible by integration.*permissions: pull-requests: write/,
    )
    assert.equal(calls, 2, 'a 403 is not retried')
  })

  test("GitHub's own failure is retried, and the call goes through", async () => {
    let n = 0
    answer = (request, response) =>
      (++n === 1 ? json(502, { message: 'Bad gateway' }) : json(200, []))(request, response)
    const { sticky, logger } = comment({ callTimeoutMs: 1000 })
    assert.equal(await sticky.load(), undefined)
    assert.equal(calls, 2)
    assert.deepEqual(warnings(logger), [])
  })

  test('all calls together stop at the budget', async () => {
    answer = () => {}
    const { sticky, logger } = comment({ callTimeoutMs: 10_000, retries: 5, budgetMs: 80 })
    const started = Date.now()
    await sticky.load()
    await sticky.save('body')
    assert.ok(Date.now() - started < 5_000, 'the budget, not the 10 s time-out, ended the calls')
    const [load, save] = warnings(logger)
    assert.match(
      load!,
      // The call's time-out is what is left of the budget when it starts: 0.08 s less the milliseconds before it.
      /Could not read the comments of #5: (no answer from GitHub within 0\.0\d+ s|GitHub took more than 0\.08 s in all)/,
    )
    assert.match(save!, /Could not comment on #5: GitHub took more than 0\.08 s in all/)
  })

  test('a cancelled run gives its comment only the seconds it has left', async () => {
    answer = () => {} // never answers
    const { sticky, logger } = comment({ callTimeoutMs: 60_000, retries: 2 })
    // Were the 60 s time-out used, the test would time out.
    await sticky.save('body', { withinMs: 50 })
    // The budget is counted from the comment's start, so "in all" reads 0.05 s plus the milliseconds
    // before save() (0.051 s on a slow machine): under a tenth of a second either way, not 60 s.
    assert.match(
      warnings(logger)[0]!,
      /^warning: Could not comment on #5: (no answer from GitHub within 0\.0\d+ s|GitHub took more than 0\.0\d+ s in all)/,
    )
  })
})

test("the GitHub calls' classifier: a retry of what a retry can fix, a time-out only where a retry is harmless", () => {
  const answered = (status: number) => new GitHubAnswerError(status, 'm', undefined)
  const noAnswer = new GitHubConnectionError(
    Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
  )
  assert.equal(githubVerdict(answered(502), true), true)
  assert.equal(githubVerdict(answered(429), true), true)
  assert.equal(githubVerdict(noAnswer, false), true)
  // A rate limit is waited out as GitHub asks.
  assert.deepEqual(githubVerdict(new GitHubAnswerError(429, 'm', '7'), true), { afterMs: 7_000 })
  // GitHub refused: no retry can help.
  assert.equal(githubVerdict(answered(403), true), false)
  assert.equal(githubVerdict(answered(404), true), false)
})
