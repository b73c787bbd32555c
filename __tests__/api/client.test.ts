import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { ServiceClient } from '../../src/api/client.ts'
import { createAgent } from '../../src/api/http.ts'
import { ServiceError } from '../../src/api/errors.ts'
import { retryPolicy } from '../../src/common/retry.ts'
import { DEFAULT_SEED, type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { explainServiceFailure } from '../../src/inputs/service-hints.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const TOKEN = 'gamehost-demo-token'
const agent = createAgent()
after(() => agent.close())

function clientFor(emulator: Emulator, token = TOKEN, overrides: Parameters<typeof retryPolicy>[0] = {}) {
  const logger = memoryLogger()
  const waits: number[] = []
  const client = new ServiceClient({
    baseUrl: emulator.url,
    token,
    dispatcher: agent,
    logger,
    retry: retryPolicy({ sleep: async (ms) => void waits.push(ms), ...overrides }),
    explain: explainServiceFailure,
  })
  return { client, logger, waits }
}

const productionNamespace = DEFAULT_SEED.games.find((g) => g.id === GAME)!.namespaces![0]!

describe('the client against the emulator', () => {
  let emulator: Emulator
  before(async () => {
    emulator = await startTestEmulator({ multipartThreshold: 1024, partSize: 1024 })
  })
  after(() => emulator.close())

  test('lists servers newest first, filtered by tags, with destroyed ones on request', async () => {
    const { client } = clientFor(emulator)
    const active = await client.listServers(GAME, '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15')
    assert.ok(active.servers.length > 0)
    assert.ok(active.servers.every((s) => s.destroyed_at === undefined))
    const all = await client.listServers(GAME, '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15', {
      includeDestroyed: true,
    })
    assert.ok(all.servers.length > active.servers.length)
    const created = all.servers.map((s) => s.created_at)
    assert.deepEqual(
      created,
      [...created].sort((a, b) => b - a),
    )
    const eu = await client.listServers(GAME, '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15', {
      tags: { region: 'eu' },
      includeDestroyed: true,
    })
    assert.ok(eu.servers.length > 0 && eu.servers.every((s) => s.tags.region === 'eu'))
    const afterFirst = await client.listServers(GAME, '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15', {
      includeDestroyed: true,
      cursor: all.servers[0]!.id,
    })
    assert.deepEqual(afterFirst.servers, all.servers.slice(1))
  })

  test('reads a lobby, lists avatars, validates a group', async () => {
    const { client } = clientFor(emulator)
    const lobbies = DEFAULT_SEED.games.find((g) => g.id === GAME)!.lobbies!
    const answer = await client.getNamespaceLobby(GAME, productionNamespace.id, lobbies[0]!.lobby_id)
    assert.deepEqual(answer.lobby, lobbies[0])
    assert.deepEqual(
      answer.metrics,
      lobbies[0]!.metrics,
      'metrics beside the lobby, as the service sends them',
    )
    const { custom_avatars } = await client.listCustomAvatars(GAME)
    assert.ok(
      custom_avatars.some((a) => a.complete && a.url) && custom_avatars.some((a) => !a.complete && !a.url),
    )
    assert.deepEqual(await client.validateGroup('Fine Name'), { errors: [] })
    assert.deepEqual(await client.validateGroup('Taken Group'), { errors: [{ path: ['not-unique'] }] })
  })

  test('validates a matchmaker config and reports its error paths', async () => {
    const { client } = clientFor(emulator)
    assert.deepEqual(
      await client.validateMatchmakerConfig(GAME, productionNamespace.id, {
        lobby_count_max: 10,
        max_players: 8,
      }),
      { errors: [] },
    )
    const { errors } = await client.validateMatchmakerConfig(GAME, productionNamespace.id, {
      lobby_count_max: 40000,
      max_players: 0,
    })
    assert.deepEqual(errors, [
      { path: ['lobby-count', 'too-high'] },
      { path: ['max-players', 'too-low'] },
      ...['client', 'vpn', 'proxy', 'tor', 'hosting'].map((kind) => ({
        path: ['max-players', kind, 'too-low'],
      })),
    ])
  })

  test('creates a namespace, adds a domain, and surfaces the service errors', async () => {
    const { client } = clientFor(emulator)
    const { namespace_id } = await client.createNamespace(GAME, {
      name_id: 'client-test',
      display_name: 'Client test',
      version_id: '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
    })
    await client.addNamespaceDomain(GAME, namespace_id, 'client-test.example.com')
    assert.deepEqual(emulator.namespaces(GAME).find((n) => n.namespaceId === namespace_id)?.domains, [
      'client-test.example.com',
    ])
    const duplicate = await client
      .createNamespace(GAME, {
        name_id: 'client-test',
        display_name: 'Again',
        version_id: '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
      })
      .catch((e: unknown) => e)
    assert.ok(duplicate instanceof ServiceError)
    assert.equal(duplicate.status, 400)
    assert.equal(duplicate.code, 'VALIDATION_ERROR')
    assert.match(duplicate.message, /name-id\.not-unique/)
    assert.match(duplicate.message, /\(ray id [0-9a-f-]{36}\)/)
    assert.ok(duplicate.rayId)
    // The same domain again on the same namespace: the service's 500, not CLOUD_HOSTNAME_TAKEN.
    const again = await client
      .addNamespaceDomain(GAME, namespace_id, 'client-test.example.com')
      .catch((e: unknown) => e)
    assert.ok(again instanceof ServiceError && again.status === 500 && again.code === 'ERROR')
    const taken = await client
      .addNamespaceDomain(GAME, productionNamespace.id, 'client-test.example.com')
      .catch((e: unknown) => e)
    assert.ok(taken instanceof ServiceError && taken.code === 'CLOUD_HOSTNAME_TAKEN')

    // The two read routes: the game lists the namespace by name_id, the namespace its domains.
    const { game } = await client.getGame(GAME)
    assert.equal(game.namespaces.find((n) => n.name_id === 'client-test')?.namespace_id, namespace_id)
    assert.deepEqual(
      game.versions.map((v) => v.display_name),
      ['0.0.1', '0.9.0', '1.0.0'],
    )
    const { namespace } = await client.getNamespace(GAME, namespace_id)
    assert.deepEqual(
      namespace.config.cdn.domains.map((d) => d.domain),
      ['client-test.example.com'],
    )
    await client.removeNamespaceDomain(GAME, namespace_id, 'client-test.example.com')
    assert.deepEqual((await client.getNamespace(GAME, namespace_id)).namespace.config.cdn.domains, [])
  })

  test('validation errors show every path, pairs included', async () => {
    const { client } = clientFor(emulator)
    const error = await client
      .createNamespace(GAME, {
        name_id: 'a'.repeat(17),
        display_name: 'x',
        version_id: '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
      })
      .catch((e: unknown) => e)
    assert.ok(error instanceof ServiceError)
    assert.match(error.message, /name-id\.too-long/)
    assert.match(error.message, /name-id\.invalid/)
  })

  test('an unknown id is reported at once, naming the input that was probably wrong', async () => {
    const { client, waits } = clientFor(emulator)
    const before = emulator.requests.length
    const error = await client
      .createNamespace(GAME, {
        name_id: 'no-version',
        display_name: 'x',
        version_id: '00000000-0000-4000-8000-000000000000',
      })
      .catch((e: unknown) => e)
    assert.ok(error instanceof ServiceError)
    assert.equal(error.status, 500)
    assert.equal(error.code, 'ERROR')
    assert.match(error.message, /check version-id/)
    assert.equal(emulator.requests.length - before, 1, 'not retried')
    assert.deepEqual(waits, [])
  })

  test('auth failures carry the service code', async () => {
    const cases: Array<[string, string, number, string]> = [
      ['unknown token', 'not-a-token', 400, 'TOKEN_INVALID'],
      ['expired token', 'gamehost-expired-token', 401, 'CLAIMS_ENTITLEMENT_EXPIRED'],
      ['token of another game', 'gamehost-other-token', 403, 'API_FORBIDDEN'],
    ]
    for (const [name, token, status, code] of cases) {
      const error = await clientFor(emulator, token)
        .client.listCustomAvatars(GAME)
        .catch((e: unknown) => e)
      assert.ok(error instanceof ServiceError, name)
      assert.equal(error.status, status, name)
      assert.equal(error.code, code, name)
    }
  })

  test('creates a CDN site with one presigned request per part, and completes it', async () => {
    const { client } = clientFor(emulator)
    const site = await client.createCdnSite(GAME, {
      display_name: 'Client site',
      files: [
        { path: 'index.html', content_length: 5, content_type: 'text/html; charset=utf-8' },
        { path: 'big.bin', content_length: 2500 },
      ],
    })
    assert.deepEqual(
      [...site.presigned_requests].map((r) => [r.path, r.byte_offset, r.content_length]),
      [
        ['index.html', 0, 5],
        ['big.bin', 0, 1024],
        ['big.bin', 1024, 1024],
        ['big.bin', 2048, 452],
      ],
    )
    // The real service has no missing-part check: assembling fails, and it answers its internal error.
    const before = emulator.requests.length
    const refused = await client.completeUpload(site.upload_id).catch((e: unknown) => e)
    assert.ok(refused instanceof ServiceError)
    assert.equal(refused.status, 500)
    assert.equal(refused.code, 'ERROR')
    assert.match(refused.message, /unknown or a part of it is missing/)
    assert.equal(emulator.requests.length - before, 1, 'not retried')
    assert.equal(emulator.site(site.site_id)?.completed, false)
  })
})

test('a validation error whose message names no path shows every path of its metadata', () => {
  const error = new ServiceError({
    operation: 'games.namespaces.createGameNamespace',
    status: 400,
    body: {
      code: 'VALIDATION_ERROR',
      message: 'Validation error',
      ray_id: 'r',
      metadata: { errors: [{ path: ['name-id', 'too-long'] }, { path: ['name-id', 'invalid'] }] },
    },
  })
  assert.match(
    error.message,
    /400 VALIDATION_ERROR: Validation error \[name-id\.too-long, name-id\.invalid\] \(ray id r\)/,
  )
})

describe('rate limits', () => {
  test('a 429 is waited out as retry-after says, then the call goes through', async () => {
    // 55 s before the end of a 15-minute window.
    let clock = Date.parse('2026-11-21T10:14:05Z')
    const emulator = await startTestEmulator({
      rateLimit: { writesPerMinute: 2, readsPerMinute: 100 },
      now: () => clock,
    })
    after(() => emulator.close())
    const { client, waits, logger } = clientFor(emulator, TOKEN, {
      now: () => clock,
      random: () => 0,
      sleep: async (ms) => {
        waits.push(ms)
        clock += ms
      },
    })
    // 2 writes a minute are 30 a window: the 31st waits until the window ends.
    for (let i = 0; i < 31; i++) await client.validateGroup(`Group ${i}`)
    assert.equal(waits.length, 1)
    assert.ok(waits[0]! > 50_000 && waits[0]! <= 60_000, `waited ${waits[0]} ms`)
    assert.ok(logger.lines.some((l) => /429 API_RATE_LIMIT; retry 1 of 8/.test(l)))
  })
})

describe('answers of any length and framing', () => {
  // A server of our own, to send what the emulator never does: chunked bodies, a byte-order mark.
  const avatars = Array.from({ length: 3000 }, (_, i) => ({
    upload_id: `a0000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    display_name: `Ünïcødé ✓ ${i}`,
    content_length: i,
    create_ts: '2026-01-01T00:00:00Z',
    complete: i % 2 === 0,
  }))
  let framing: 'chunked' | 'bom' = 'chunked'
  const server = createServer((_request, response) => {
    const body = Buffer.from(JSON.stringify({ custom_avatars: avatars }))
    if (framing === 'bom') {
      const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body])
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': withBom.length })
      response.end(withBom)
      return
    }
    // Odd-sized chunks, so that characters of several bytes are cut in two between chunks.
    response.writeHead(200, { 'content-type': 'application/json' })
    for (let at = 0; at < body.length; at += 997) response.write(body.subarray(at, at + 997))
    response.end()
  })
  let url = ''
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  after(() => new Promise<void>((resolve) => server.close(() => resolve())))

  for (const kind of ['chunked', 'bom'] as const) {
    test(`reads a ${kind === 'chunked' ? 'chunked answer of unknown length' : 'answer that starts with a byte-order mark'}`, async () => {
      framing = kind
      const client = new ServiceClient({
        baseUrl: url,
        token: TOKEN,
        dispatcher: agent,
        logger: memoryLogger(),
        retry: retryPolicy({ sleep: async () => {} }),
      })
      const answer = await client.listCustomAvatars(GAME)
      assert.deepEqual(answer.custom_avatars, avatars)
    })
  }
})
