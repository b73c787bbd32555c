// The emulator against the service's official SDK (@rivet-gg/api 23.2.0-rc1, generated from the
// service's own API definition). The SDK validates every answer it parses (parseOrThrow, always on in
// this version): an answer of the wrong shape fails the call. Every error must arrive as the SDK's
// typed error. Where the SDK and the service's source disagree, service-behaviour.md decides, and the
// test says so.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Rivet, RivetClient, RivetError } from '@rivet-gg/api'
import { DEFAULT_SEED, startEmulator, type Emulator } from '../../src/emulator/index.ts'

const GAME = DEFAULT_SEED.games[0]!.id
const NAMESPACE = DEFAULT_SEED.games[0]!.namespaces![0]!.id
const LOBBY = DEFAULT_SEED.games[0]!.lobbies![0]!
const UNKNOWN = '00000000-0000-4000-8000-000000000000'

/** The SDK's error of a call that must fail, checked to be `type`, with the service's code. */
async function sdkError<E extends RivetError>(
  call: Promise<unknown>,
  type: new (...args: never[]) => E,
  status: number,
  code: string,
): Promise<E> {
  const error = await call.then(
    () => assert.fail('the call succeeded'),
    (e: unknown) => e,
  )
  assert.ok(error instanceof type, `${String(error)} is a ${type.name}`)
  assert.equal(error.statusCode, status)
  assert.equal((error.body as Rivet.ErrorBody).code, code)
  return error
}

describe('the official SDK against the emulator', () => {
  let emulator: Emulator
  let sdk: RivetClient
  before(async () => {
    emulator = await startEmulator({ rateLimit: false })
    sdk = new RivetClient({ environment: emulator.url, token: 'gamehost-demo-token' })
  })
  after(() => emulator.close())

  test('games.getGameById: the game with its namespaces and versions', async () => {
    const { game, watch } = await sdk.cloud.games.games.getGameById(GAME)
    assert.equal(game.gameId, GAME)
    assert.equal(game.nameId, 'demo-game')
    assert.ok(game.createTs instanceof Date)
    assert.deepEqual(
      game.namespaces.map((n) => [n.namespaceId, n.nameId]),
      [[NAMESPACE, 'production']],
    )
    assert.deepEqual(
      game.versions.map((v) => v.displayName),
      ['0.9.0', '1.0.0'],
    )
    assert.ok(game.versions.every((v) => v.createTs instanceof Date))
    assert.equal(typeof watch.index, 'string')
  })

  test('namespaces: create, read, add a domain, remove it', async () => {
    const { namespaceId } = await sdk.cloud.games.namespaces.createGameNamespace(GAME, {
      displayName: 'SDK Preview',
      nameId: 'sdk-preview',
      versionId: DEFAULT_SEED.games[0]!.namespaces![0]!.versionId,
    })
    await sdk.cloud.games.namespaces.addNamespaceDomain(GAME, namespaceId, { domain: 'sdk.example.com' })
    const { namespace } = await sdk.cloud.games.namespaces.getGameNamespaceById(GAME, namespaceId)
    assert.equal(namespace.nameId, 'sdk-preview')
    assert.ok(namespace.createTs instanceof Date)
    assert.deepEqual(
      namespace.config.cdn.domains.map((d) => [d.domain, d.verificationStatus]),
      [['sdk.example.com', 'active']],
    )
    assert.ok(namespace.config.cdn.domains[0]!.createTs instanceof Date)

    // The same domain on the same namespace: the service's primary-key violation, a 500.
    await sdkError(
      sdk.cloud.games.namespaces.addNamespaceDomain(GAME, namespaceId, { domain: 'sdk.example.com' }),
      Rivet.InternalError,
      500,
      'ERROR',
    )
    // Another namespace holds it: CLOUD_HOSTNAME_TAKEN.
    await sdkError(
      sdk.cloud.games.namespaces.addNamespaceDomain(GAME, NAMESPACE, { domain: 'sdk.example.com' }),
      Rivet.BadRequestError,
      400,
      'CLOUD_HOSTNAME_TAKEN',
    )
    await sdk.cloud.games.namespaces.removeNamespaceDomain(GAME, namespaceId, 'sdk.example.com')
    const after = await sdk.cloud.games.namespaces.getGameNamespaceById(GAME, namespaceId)
    assert.deepEqual(after.namespace.config.cdn.domains, [])

    const duplicate = await sdkError(
      sdk.cloud.games.namespaces.createGameNamespace(GAME, {
        displayName: 'Again',
        nameId: 'sdk-preview',
        versionId: DEFAULT_SEED.games[0]!.namespaces![0]!.versionId,
      }),
      Rivet.BadRequestError,
      400,
      'VALIDATION_ERROR',
    )
    assert.deepEqual((duplicate.body as Rivet.ErrorBody).metadata, {
      errors: [{ path: ['name-id', 'not-unique'] }],
    })
  })

  test('namespaces.validateGameNamespaceMatchmakerConfig: paths as the service reports them', async () => {
    const valid = await sdk.cloud.games.namespaces.validateGameNamespaceMatchmakerConfig(GAME, NAMESPACE, {
      lobbyCountMax: 8,
      maxPlayers: 8,
    })
    assert.deepEqual(valid.errors, [])
    const invalid = await sdk.cloud.games.namespaces.validateGameNamespaceMatchmakerConfig(GAME, NAMESPACE, {
      lobbyCountMax: 0,
      maxPlayers: 0,
    })
    assert.equal(invalid.errors.length, 7)
    await sdkError(
      sdk.cloud.games.namespaces.validateGameNamespaceMatchmakerConfig(GAME, NAMESPACE, {
        lobbyCountMax: -1,
        maxPlayers: 8,
      }),
      Rivet.BadRequestError,
      400,
      'CLOUD_INVALID_CONFIG',
    )
  })

  test('namespaces.logs.getNamespaceLobby: metrics beside the lobby', async () => {
    const answer = await sdk.cloud.games.namespaces.logs.getNamespaceLobby(GAME, NAMESPACE, LOBBY.lobby_id)
    assert.equal(answer.lobby.lobbyId, LOBBY.lobby_id)
    assert.ok(answer.lobby.createTs instanceof Date)
    assert.deepEqual(answer.metrics?.cpu, LOBBY.metrics?.cpu)
    assert.equal(answer.metrics?.allocatedMemory, LOBBY.metrics?.allocated_memory)
    assert.deepEqual(answer.stdoutPresignedUrls, [])
    assert.deepEqual(answer.stderrPresignedUrls, [])
    assert.deepEqual(answer.perfLists, [])
    await sdkError(
      sdk.cloud.games.namespaces.logs.getNamespaceLobby(GAME, NAMESPACE, UNKNOWN),
      Rivet.InternalError,
      500,
      'ERROR',
    )
  })

  test('avatars.listGameCustomAvatars: newest first', async () => {
    const { customAvatars } = await sdk.cloud.games.avatars.listGameCustomAvatars(GAME)
    assert.deepEqual(
      customAvatars.map((a) => a.displayName),
      ['Wizard', 'Ranger', 'Knight'],
    )
    assert.ok(customAvatars.every((a) => a.createTs instanceof Date))
  })

  test('groups.validate: a pair of paths for a name too long', async () => {
    const { errors } = await sdk.cloud.groups.validate({ displayName: 'x'.repeat(25) })
    assert.deepEqual(
      errors.map((e) => e.path),
      [['too-long'], ['display-name-invalid']],
    )
  })

  test('cdn.createGameCdnSite, the presigned PUTs, then uploads.completeUpload', async () => {
    const files = [
      { path: 'index.html', contentLength: 5, contentType: 'text/html' },
      { path: 'game.wasm', contentLength: 3 },
    ]
    const bodies: Record<string, string> = { 'index.html': 'hello', 'game.wasm': 'abc' }
    const site = await sdk.cloud.games.cdn.createGameCdnSite(GAME, { displayName: 'SDK site', files })
    assert.equal(site.presignedRequests.length, 2, 'one PUT per file')
    for (const request of site.presignedRequests) {
      assert.equal(request.byteOffset, 0)
      assert.ok(request.url.startsWith(`${emulator.storeUrl}/`))
      const type = files.find((f) => f.path === request.path)?.contentType
      const put = await fetch(request.url, {
        method: 'PUT',
        body: bodies[request.path],
        headers: type ? { 'content-type': type } : {},
      })
      assert.equal(put.status, 200, await put.text())
    }
    await sdk.cloud.uploads.completeUpload(site.uploadId)
    assert.equal(emulator.site(site.siteId)?.completed, true)
  })

  test('errors arrive as the SDK typed errors', async () => {
    // A path segment that is not a UUID matches no route.
    await sdkError(sdk.cloud.games.games.getGameById('demo-game'), Rivet.NotFoundError, 404, 'API_NOT_FOUND')
    await sdkError(
      sdk.cloud.games.namespaces.getGameNamespaceById(GAME, UNKNOWN),
      Rivet.InternalError,
      500,
      'ERROR',
    )
    const other = new RivetClient({ environment: emulator.url, token: 'gamehost-other-token' })
    await sdkError(other.cloud.games.games.getGameById(GAME), Rivet.ForbiddenError, 403, 'API_FORBIDDEN')
    await sdkError(
      sdk.cloud.games.namespaces.createGameNamespace(GAME, {
        displayName: 'x',
        nameId: 'not-a-uuid-version',
        versionId: 'v1',
      }),
      Rivet.BadRequestError,
      400,
      'API_BAD_BODY',
    )
    // The SDK maps UnauthorizedError to 408; the service answers a missing token with 401
    // API_UNAUTHORIZED (service-behaviour.md, "Requests and authentication"): the SDK's base error.
    const anonymous = new RivetClient({ environment: emulator.url })
    const unauthorized = await sdkError(
      anonymous.cloud.games.games.getGameById(GAME),
      RivetError,
      401,
      'API_UNAUTHORIZED',
    )
    assert.ok(!(unauthorized instanceof Rivet.UnauthorizedError))
  })

  test('a rate-limited call arrives as RateLimitError', async () => {
    const limited = await startEmulator({ rateLimit: { writesPerMinute: 1, readsPerMinute: 1 } })
    try {
      const client = new RivetClient({ environment: limited.url, token: 'gamehost-demo-token' })
      for (let n = 0; n < 15; n++) await client.cloud.games.avatars.listGameCustomAvatars(GAME)
      const error = await sdkError(
        client.cloud.games.avatars.listGameCustomAvatars(GAME),
        Rivet.RateLimitError,
        429,
        'API_RATE_LIMIT',
      )
      assert.equal(typeof (error.body as Rivet.ErrorBody).metadata, 'number')
    } finally {
      await limited.close()
    }
  })
})
