// Failures that name the input to fix. A connection refused before anything of the service answered
// (a wrong api-url port) fails in a second or two, naming api-url, where the ordinary retries took a
// minute; once the service has answered, a refused connection is an outage and is retried as before.
// The service's refusals of the token name `token`, of the game `game-id`, and its 500 for an unknown
// id names the id's input, keeping the service's code, message and ray id.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { FIRST_CONTACT_RETRIES, ServiceClient } from '../../src/api/client.ts'
import { OPS } from '../../src/api/operations.ts'
import { createAgent } from '../../src/api/http.ts'
import { NetworkError, ServiceError } from '../../src/api/errors.ts'
import { retryPolicy, type RetryPolicy } from '../../src/common/retry.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { Input } from '../../src/inputs/constants.ts'
import { explainServiceFailure } from '../../src/inputs/service-hints.ts'
import { deadPort } from '../support/helpers.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const UNKNOWN = '00000000-0000-4000-8000-000000000000'
const agent = createAgent()
after(() => agent.destroy())

const client = (baseUrl: string, retry: Partial<RetryPolicy> = {}, token = 'gamehost-demo-token') => {
  const logger = memoryLogger()
  const waits: number[] = []
  const service = new ServiceClient({
    baseUrl,
    token,
    dispatcher: agent,
    logger,
    retry: retryPolicy({ sleep: async (ms) => void waits.push(ms), ...retry }),
    explain: explainServiceFailure,
  })
  return { service, logger, waits }
}

describe('a connection refused before the service ever answered', () => {
  test('is retried at most twice, quickly, and fails naming api-url', async () => {
    const port = await deadPort()
    const { service, waits, logger } = client(`http://127.0.0.1:${port}`)
    const error = await service.getGame(GAME).catch((e: unknown) => e)
    // The retry lines count the retries this failure has, not the ordinary 8.
    assert.deepEqual(
      logger.lines.flatMap((line) => /; (retry \d+ of \d+) in/.exec(line)?.[1] ?? []),
      ['retry 1 of 2', 'retry 2 of 2'],
    )
    assert.ok(error instanceof NetworkError, String(error))
    assert.match(
      error.message,
      new RegExp(
        `^games\\.getGameById failed: the connection was refused \\(ECONNREFUSED\\) \\(127\\.0\\.0\\.1:${port}\\): ` +
          'nothing at api-url has answered in this run; check api-url \\(its host and port\\) \\(gave up after 3 attempts\\)$',
      ),
    )
    assert.equal(waits.length, FIRST_CONTACT_RETRIES, 'not the 8 ordinary retries')
    assert.ok(
      waits.every((ms) => ms <= 1000),
      `quick retries: ${waits.join(', ')} ms`,
    )
  })

  test('with the real clock, the default policy gives up in seconds, not a minute', async () => {
    const port = await deadPort()
    const service = new ServiceClient({
      baseUrl: `http://127.0.0.1:${port}`,
      token: 't',
      dispatcher: agent,
      logger: memoryLogger(),
      retry: retryPolicy(),
      explain: explainServiceFailure,
    })
    const started = Date.now()
    await assert.rejects(service.listCustomAvatars(GAME), /check api-url/)
    const elapsed = Date.now() - started
    assert.ok(elapsed < 5_000, `gave up after ${elapsed} ms`)
  })

  test('an unresolvable host fails at once, naming api-url', async () => {
    const { service, waits } = client('http://gamehost-test.invalid')
    await assert.rejects(service.getGame(GAME), /could not be resolved.*check api-url/)
    // ENOTFOUND is not retried; a resolver that is down (EAI_AGAIN) gets the first-contact retries.
    assert.ok(waits.length <= FIRST_CONTACT_RETRIES)
  })
})

describe('once the service has answered, a refused connection is an outage', () => {
  let server: Server
  let port = 0
  const listen = (at: number) =>
    new Promise<void>((resolve) => {
      server = createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"custom_avatars":[]}')
      })
      server.listen(at, '127.0.0.1', resolve)
    })
  const stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  before(async () => {
    await listen(0)
    port = (server.address() as AddressInfo).port
  })
  after(() => stop())

  test('the ordinary retries carry a run through a restart of the service', async () => {
    const { service, logger, waits } = client(`http://127.0.0.1:${port}`, {
      sleep: async (ms) => {
        waits.push(ms)
        // Back after the fourth wait: more than the first-contact retries would have allowed.
        if (waits.length === 4) await listen(port)
      },
    })
    assert.deepEqual(await service.listCustomAvatars(GAME), { custom_avatars: [] })
    await stop()
    assert.deepEqual(await service.listCustomAvatars(GAME), { custom_avatars: [] })
    assert.equal(waits.length, 4)
    const retries = logger.lines.filter((line) => line.includes('retry'))
    assert.deepEqual(
      retries.map((line) => /; (retry \d+ of \d+) in/.exec(line)?.[1]),
      ['retry 1 of 8', 'retry 2 of 8', 'retry 3 of 8', 'retry 4 of 8'],
    )
    assert.ok(
      retries.every((line) => !line.includes('api-url')),
      'mid-run, the outage is not blamed on api-url',
    )
  })
})

describe("the service's refusals name the input to fix", () => {
  let emulator: Emulator
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false })
  })
  after(() => emulator.close())

  test('a token the service does not know, an expired one, one of another game', async () => {
    const cases: Array<[token: string, status: number, code: string, hint: RegExp, inputs: string[]]> = [
      ['not-a-token', 400, 'TOKEN_INVALID', /does not know this token .*: check token\./, ['token']],
      [
        'gamehost-expired-token',
        401,
        'CLAIMS_ENTITLEMENT_EXPIRED',
        /has expired: make a new one and put it in token\./,
        ['token'],
      ],
      [
        'gamehost-other-token',
        403,
        'API_FORBIDDEN',
        /does not grant access to this game .*: check game-id, and that token is a token of that game\./,
        ['game-id', 'token'],
      ],
    ]
    for (const [token, status, code, hint, inputs] of cases) {
      const error = await client(emulator.url, {}, token)
        .service.listCustomAvatars(GAME)
        .catch((e: unknown) => e)
      assert.ok(error instanceof ServiceError, code)
      assert.equal(error.status, status)
      assert.equal(error.code, code)
      assert.deepEqual(error.inputs, inputs)
      // The service's own code, message and ray id stay in the message, before the hint.
      assert.ok(
        error.message.startsWith(
          `games.avatars.listGameCustomAvatars failed: ${status} ${code}: ${error.serviceMessage}`,
        ),
        error.message,
      )
      assert.match(error.message, new RegExp(`\\(ray id ${error.rayId}\\)\\. `))
      assert.match(error.message, hint)
    }
  })

  test('a 500 ERROR for an unknown id names the id input', async () => {
    const { service, waits } = client(emulator.url)
    const error = await service.getNamespace(GAME, UNKNOWN).catch((e: unknown) => e)
    assert.ok(error instanceof ServiceError)
    assert.equal(error.status, 500)
    assert.match(
      error.message,
      /^games\.namespaces\.getGameNamespaceById failed: 500 ERROR: An internal error has occurred\. \(ray id [^)]+\)\. .*: check namespace-id\./,
    )
    assert.deepEqual(error.inputs, ['namespace-id'])
    assert.deepEqual(waits, [], 'not retried')
  })

  test('401 API_UNAUTHORIZED names token', async () => {
    const server = createServer((_request, response) =>
      response
        .writeHead(401, { 'content-type': 'application/json', 'rvt-ray-id': 'ray-401' })
        .end('{"code":"API_UNAUTHORIZED","message":"No bearer token provided."}'),
    )
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const { service } = client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
      const error = await service.getGame(GAME).catch((e: unknown) => e)
      assert.ok(error instanceof ServiceError)
      assert.equal(
        error.message,
        'games.getGameById failed: 401 API_UNAUTHORIZED: No bearer token provided. (ray id ray-401). ' +
          'The service got no bearer token it could read: check token (an empty or missing secret?)',
      )
      assert.deepEqual(error.inputs, ['token'])
    } finally {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  test('an api-url with a path the service does not have: its 404 API_NOT_FOUND names api-url', async () => {
    const { service } = client(`${emulator.url}/api/v1`)
    const error = await service.getGame(GAME).catch((e: unknown) => e)
    assert.ok(error instanceof ServiceError, String(error))
    assert.match(
      error.message,
      /^games\.getGameById failed: 404 API_NOT_FOUND: .*\(ray id [0-9a-f-]{36}\)\. The service has no such route: api-url has a path it should not have \(every call adds \/cloud\/\.\.\.\)\. Check api-url: the base URL of the service's API, such as https:\/\/api\.example\.com\. See /,
    )
    assert.deepEqual(error.inputs, ['api-url'])
  })

  test("the client says what a failure points at in its own terms; the run's Explain names the input", async () => {
    const unexplained = new ServiceClient({
      baseUrl: emulator.url,
      token: 'not-a-token',
      dispatcher: agent,
      logger: memoryLogger(),
      retry: retryPolicy({ sleep: async () => {} }),
    })
    const refused = await unexplained.listCustomAvatars(GAME).catch((e: unknown) => e)
    assert.ok(refused instanceof ServiceError)
    assert.deepEqual(refused.concern, { about: 'token', code: 'TOKEN_INVALID' })
    assert.deepEqual(refused.inputs, [])
    assert.doesNotMatch(refused.message, /check/)
    const explained = await client(emulator.url)
      .service.getNamespace(GAME, UNKNOWN)
      .catch((e: unknown) => e)
    assert.ok(explained instanceof ServiceError)
    assert.deepEqual(explained.concern, {
      about: 'unknown-id',
      operation: 'games.namespaces.getGameNamespaceById',
    })
    const port = await deadPort()
    const unreached = await client(`http://127.0.0.1:${port}`)
      .service.getGame(GAME)
      .catch((e: unknown) => e)
    assert.ok(unreached instanceof NetworkError)
    assert.deepEqual(unreached.concern, { about: 'base-url', problem: 'unreached' })
  })

  test('every operation says which input its 500 ERROR most likely points at', () => {
    const inputs = new Set<string>(Object.values(Input))
    for (const [key, op] of Object.entries(OPS)) {
      const explained = explainServiceFailure({ about: 'unknown-id', operation: op.name })
      const hint = explained?.hint
      const named = explained?.inputs ?? []
      assert.ok(hint && named.length, `${key} has a hint naming an input`)
      for (const input of named) {
        assert.ok(inputs.has(input), `${key}: ${input} is an input`)
        assert.match(hint, new RegExp(`(^|[^a-z-])${input}([^a-z-]|$)`), `${key}'s hint names ${input}`)
      }
    }
  })
})
