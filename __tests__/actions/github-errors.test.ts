// A GitHub that cannot be reached (its API's port refuses connections): every GitHub call of the
// actions says connection error, never a status and never advice about permissions.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { stickyComment } from '../../src/actions/comment.ts'
import { checkPullRequest, retireDeployments } from '../../src/actions/github.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { GitHubAnswerError, GitHubConnectionError, githubStatus } from '../../src/operations/github-client.ts'
import { deadPort } from '../support/helpers.ts'

process.env.GITHUB_API_URL = `http://127.0.0.1:${await deadPort()}`

const warnings = (logger: ReturnType<typeof memoryLogger>) =>
  logger.lines.filter((l) => l.startsWith('warning'))

test('the preview comment: a connection error, no permissions advice', async () => {
  const logger = memoryLogger()
  const sticky = stickyComment({
    token: 't',
    repository: 'studio/game',
    issue: 6,
    key: 'k',
    logger,
    bounds: { retryDelayMs: 1, retries: 1 },
  })
  assert.equal(await sticky.load(), undefined)
  await sticky.save('body')
  const [load, save] = warnings(logger)
  assert.match(
    load!,
    /^warning: Could not read the comments of #6: connection error, no answer from GitHub \(ECONNREFUSED\): .*ECONNREFUSED/,
  )
  assert.match(
    save!,
    /^warning: Could not comment on #6: connection error, no answer from GitHub \(ECONNREFUSED\): .*The deploy itself is fine\.$/,
  )
  for (const warning of [load!, save!]) assert.doesNotMatch(warning, /\b500\b|permissions/)
})

test("the check of a workflow_run's pull request: a connection error, no permissions advice", async () => {
  await assert.rejects(
    checkPullRequest({
      token: 't',
      repository: 'studio/game',
      number: 7,
      build: { repository: 'someone/game', branch: 'patch-1' },
    }),
    (error: Error) => {
      assert.match(
        error.message,
        /^Could not read pull request #7 to check it is the one this build ran for: connection error, no answer from GitHub \(ECONNREFUSED\): /,
      )
      assert.doesNotMatch(error.message, /\b500\b|pull-requests: read/)
      return true
    },
  )
})

test("retiring a closed preview's deployments: a connection error, no permissions advice", async () => {
  const logger = memoryLogger()
  assert.equal(
    await retireDeployments({
      token: 't',
      repository: 'studio/game',
      pullRequest: { number: 1, headRef: 'patch-1' },
      logger,
    }),
    0,
  )
  const [warning] = warnings(logger)
  assert.match(
    warning!,
    /^warning: Could not mark the pull request's GitHub deployments inactive: connection error, no answer from GitHub \(ECONNREFUSED\): /,
  )
  assert.doesNotMatch(warning!, /\b500\b|deployments: write/)
})

test('a status is shown only when GitHub answered with it', () => {
  const answered = new GitHubAnswerError(404, 'Not Found', undefined)
  assert.equal(githubStatus(answered), 404)
  assert.equal(answered.message, '404 Not Found')
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })
  const unanswered = new GitHubConnectionError(refused)
  assert.equal(githubStatus(unanswered), undefined)
  assert.equal(
    unanswered.message,
    'connection error, no answer from GitHub (ECONNREFUSED): connect ECONNREFUSED 127.0.0.1:1',
  )
})
