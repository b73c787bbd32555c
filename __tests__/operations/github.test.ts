// The one GitHub client of both faces (operations/github-client.ts): what it sends (redacted, the token as it
// must be), what it follows (a moved repository's redirect), and what a failure says: GitHub's status
// and message, a connection error, or a pull request GitHub cannot tell about, named in the face's words.
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { Agent } from 'undici'
import { FLAG_NAMING } from '../../src/cli/command.ts'
import { ACTION_NAMING, nameInputsAs } from '../../src/common/input-naming.ts'
import { runSecrets } from '../../src/common/secrets.ts'
import {
  GitHubAnswerError,
  githubCall,
  readPullRequestState,
  type GitHubOptions,
} from '../../src/operations/github-client.ts'
import { deadPort } from '../support/helpers.ts'

const SECRET = 'svc-T0ken/with+sym:bols'
const GITHUB_TOKEN = 'ghs_0123456789abcdef'

interface Seen {
  method: string
  url: string
  authorization: string | undefined
  body: string
}

describe('the GitHub client', () => {
  const seen: Seen[] = []
  let answer: (request: IncomingMessage, response: ServerResponse) => void = () => {}
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const { method = '', url = '', headers } = request
      seen.push({ method, url, authorization: headers.authorization, body: Buffer.concat(chunks).toString() })
      answer(request, response)
    })
  })
  const dispatcher = new Agent()
  let options: GitHubOptions
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
    options = { token: GITHUB_TOKEN, repository: 'studio/game', apiUrl, dispatcher }
  })
  after(async () => {
    await dispatcher.close()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const json =
    (status: number, body: unknown, headers: Record<string, string> = {}) =>
    (_request: IncomingMessage, response: ServerResponse) =>
      response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
  const fails = (_error: unknown, reason: string, status: number | undefined) => ({ reason, status })
  const rethrow = (error: unknown): never => {
    throw error
  }

  test('a request leaves with its body and query redacted, its Authorization header intact', async () => {
    runSecrets.add(SECRET)
    seen.length = 0
    answer = json(201, { id: 1 })
    const body = `failed: Bearer ${SECRET} (${Buffer.from(SECRET).toString('base64')})`
    const created = await githubCall(
      options,
      (github) => github.post<{ id: number }>(`${github.repo}/issues/35/comments?x=1`, { body }),
      rethrow,
    )
    assert.deepEqual(created, { id: 1 })
    await githubCall(options, (github) => github.get(`${github.repo}/deployments`, { ref: SECRET }), rethrow)
    assert.deepEqual(JSON.parse(seen[0]!.body), { body: 'failed: Bearer *** (***)' })
    assert.equal(seen[0]!.authorization, `Bearer ${GITHUB_TOKEN}`)
    assert.equal(seen[0]!.url, '/repos/studio/game/issues/35/comments?x=1')
    assert.equal(seen[1]!.url, '/repos/studio/game/deployments?ref=***')
  })

  test("a moved repository's redirect is followed", async () => {
    seen.length = 0
    answer = (request, response) =>
      request.url === '/repos/studio/game/pulls/3'
        ? response.writeHead(301, { location: '/repositories/42/pulls/3' }).end()
        : json(200, { state: 'closed', head: { ref: 'patch-1', sha: 'abc1234' } })(request, response)
    assert.deepEqual(await readPullRequestState(options, 3), {
      open: false,
      headRef: 'patch-1',
      headSha: 'abc1234',
    })
    assert.deepEqual(
      seen.map((s) => s.url),
      ['/repos/studio/game/pulls/3', '/repositories/42/pulls/3'],
    )
  })

  test("a failure says GitHub's status and message, and the Retry-After it asked for", async () => {
    answer = json(
      403,
      {
        message: 'Resource not accessible by integration',
        documentation_url: 'https://docs.github.com/rest',
      },
      { 'retry-after': '7' },
    )
    const refused = await githubCall(
      options,
      (github) => github.get('/user'),
      (error) => error,
    )
    assert.ok(refused instanceof GitHubAnswerError)
    assert.equal(refused.message, '403 Resource not accessible by integration - https://docs.github.com/rest')
    assert.equal(refused.retryAfter, '7')
    answer = (_request, response) => response.writeHead(502).end('<html>bad gateway</html>')
    assert.deepEqual(await githubCall(options, (github) => github.get('/user'), fails), {
      reason: '502 Bad Gateway',
      status: 502,
    })
  })

  test('a pull request GitHub cannot tell about: the reason, and the token named as the face names it', async () => {
    answer = json(404, { message: 'Not Found' })
    await assert.rejects(
      readPullRequestState(options, 9),
      /^Error: studio\/game has no pull request #9 \(404\)$/,
    )
    answer = json(403, { message: 'Resource not accessible by integration' })
    await assert.rejects(
      readPullRequestState(options, 9),
      /^Error: 403 Resource not accessible by integration \(github-token needs pull-requests: read\)$/,
    )
    nameInputsAs(FLAG_NAMING)
    try {
      await assert.rejects(readPullRequestState(options, 9), /\(--github-token needs pull-requests: read\)$/)
    } finally {
      nameInputsAs(ACTION_NAMING)
    }
  })
})

test('a GitHub that refuses connections: a connection error, no status', async () => {
  const dispatcher = new Agent()
  const apiUrl = `http://127.0.0.1:${await deadPort()}`
  try {
    const failed = await githubCall<{ reason: string; status?: number; timedOut?: boolean }>(
      { token: 't', repository: 'studio/game', apiUrl, dispatcher },
      (github) => github.get('/user'),
      (_error, reason, status, timedOut) => ({ reason, status, timedOut }),
    )
    assert.match(failed.reason, /^connection error, no answer from GitHub \(ECONNREFUSED\): /)
    assert.equal(failed.status, undefined)
    assert.equal(failed.timedOut, false)
  } finally {
    await dispatcher.close()
  }
})
