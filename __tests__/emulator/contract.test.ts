// The emulator against the service's official SDK (@rivet-gg/api 23.2.0-rc1, generated from the
// service's own API definition). The SDK validates every answer it parses (parseOrThrow, always on in
// this version): an answer of the wrong shape fails the call. Every error must arrive as the SDK's
// typed error. Where the SDK and the service's source disagree, the service's source decides, and the
// test says so. versions/reserve-name has no SDK call in this version (versions.test.ts calls it).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Rivet, RivetClient, RivetError } from '@rivet-gg/api'
import bcrypt from 'bcryptjs'
import { get } from 'node:http'
import { DEFAULT_SEED, fetchLocally, startEmulator, type Emulator } from '../../src/emulator/index.ts'

import { virtualTime } from '../support/virtual-time.ts'
const GAME = DEFAULT_SEED.games[0]!.id
const NAMESPACE = DEFAULT_SEED.games[0]!.namespaces![0]!.id
const LIVE_VERSION = DEFAULT_SEED.games[0]!.namespaces![0]!.versionId
const STAGING = DEFAULT_SEED.games[0]!.namespaces![1]!.id
const LOBBY = DEFAULT_SEED.games[0]!.lobbies![0]!
const UNKNOWN = '00000000-0000-4000-8000-000000000000'
const PUBLISH_DELAY_MS = 300
const MiB = 1024 * 1024

/** Creates a CDN site through the SDK, uploads its files and completes it; answers its site id. */
async function uploadedSite(sdk: RivetClient, files: Record<string, { body: string; type?: string }>) {
  const site = await sdk.cloud.games.cdn.createGameCdnSite(GAME, {
    displayName: 'SDK site',
    files: Object.entries(files).map(([path, { body, type }]) => ({
      path,
      contentLength: Buffer.byteLength(body),
      ...(type ? { contentType: type } : {}),
    })),
  })
  for (const request of site.presignedRequests) {
    const file = files[request.path]!
    const put = await fetch(request.url, {
      method: 'PUT',
      body: file.body,
      headers: file.type ? { 'content-type': file.type } : {},
    })
    assert.equal(put.status, 200, await put.text())
  }
  await sdk.cloud.uploads.completeUpload(site.uploadId)
  return site.siteId
}

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
  const time = virtualTime()
  let emulator: Emulator
  let sdk: RivetClient
  before(async () => {
    // Every default is the real service's; the publish delay runs on virtual time that the tests move.
    emulator = await startEmulator({ rateLimit: false, publishDelayMs: PUBLISH_DELAY_MS, timer: time.timer })
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
      [
        [NAMESPACE, 'prod'],
        [STAGING, 'staging'],
      ],
    )
    assert.deepEqual(
      game.versions.map((v) => v.displayName),
      ['0.0.1', '0.9.0', '1.0.0'],
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
    // A domain starts pending, with the CNAME its DNS needs: the namespace's own host.
    assert.deepEqual(
      namespace.config.cdn.domains.map((d) => [d.domain, d.verificationStatus, d.verificationMethod]),
      [['sdk.example.com', 'pending', { http: { cnameRecord: 'demo-game--sdk-preview.localhost' } }]],
    )
    assert.ok(namespace.config.cdn.domains[0]!.createTs instanceof Date)
    const verify = await fetch(`${emulator.url}/_emulator/domains/sdk.example.com/verify`, { method: 'POST' })
    assert.deepEqual(await verify.json(), { domain: 'sdk.example.com', verification_status: 'active' })
    const verified = await sdk.cloud.games.namespaces.getGameNamespaceById(GAME, namespaceId)
    assert.deepEqual(
      verified.namespace.config.cdn.domains.map((d) => [d.domain, d.verificationStatus]),
      [['sdk.example.com', 'active']],
    )

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

  test('cdn.createGameCdnSite: a bad display name is the 500 ERROR, a negative length MATCHMAKER_INVALID_VERSION_CONFIG', async () => {
    // The SDK declares a display name error as a validation error; the service checks the name
    // inside its site creation and fails with an internal error (the service's source).
    await sdkError(
      sdk.cloud.games.cdn.createGameCdnSite(GAME, { displayName: ' Leading', files: [] }),
      Rivet.InternalError,
      500,
      'ERROR',
    )
    await sdkError(
      sdk.cloud.games.cdn.createGameCdnSite(GAME, {
        displayName: 'SDK site',
        files: [{ path: 'index.html', contentLength: -1 }],
      }),
      Rivet.BadRequestError,
      400,
      'MATCHMAKER_INVALID_VERSION_CONFIG',
    )
  })

  test('versions.getGameVersionById: the matchmaker as game_modes and as legacy lobby_groups', async () => {
    const { version } = await sdk.cloud.games.versions.getGameVersionById(GAME, LIVE_VERSION)
    assert.equal(version.versionId, LIVE_VERSION)
    assert.equal(version.displayName, '1.0.0')
    assert.ok(version.createTs instanceof Date)
    const matchmaker = version.config.matchmaker!
    const ranked = matchmaker.gameModes!['ranked-duo']!
    assert.deepEqual([ranked.listable, ranked.taggable, ranked.allowDynamicMaxPlayers], [false, true, true])
    assert.equal(ranked.actions?.find?.identityRequirement, 'guest')
    assert.deepEqual(Object.keys(ranked.regions!).sort(), ['eu-fra', 'us-nyc'])
    assert.equal(ranked.regions!['eu-fra']!.tier, 'basic-2d1')
    assert.deepEqual(
      matchmaker.lobbyGroups!.map((group) => [group.nameId, group.maxPlayersNormal, group.regions.length]),
      [
        ['default', 16, 2],
        ['ranked-duo', 2, 2],
      ],
    )
    assert.ok(matchmaker.lobbyGroups!.every((group) => group.runtime.docker?.buildId))
    // Neither kv nor identity is kept in a version.
    assert.equal(version.config.kv, undefined)
    assert.equal(version.config.identity, undefined)
    await sdkError(
      sdk.cloud.games.versions.getGameVersionById(GAME, UNKNOWN),
      Rivet.InternalError,
      500,
      'ERROR',
    )
  })

  test('versions.createGameVersion and validateGameVersion: a CDN site goes into a version', async () => {
    const siteId = await uploadedSite(sdk, { 'index.html': { body: '<h1>sdk</h1>', type: 'text/html' } })
    const { version: live } = await sdk.cloud.games.versions.getGameVersionById(GAME, LIVE_VERSION)
    const config: Rivet.cloud.version.Config = {
      cdn: {
        siteId,
        routes: [
          {
            glob: '**/*.html',
            priority: 10,
            middlewares: [
              { kind: { customHeaders: { headers: [{ name: 'cache-control', value: 'no-cache' }] } } },
            ],
          },
        ],
      },
      // The read config without its legacy form: game_modes keep their settings.
      matchmaker: { ...live.config.matchmaker, lobbyGroups: undefined },
      kv: {},
    }
    const valid = await sdk.cloud.games.versions.validateGameVersion(GAME, { displayName: 'sdk 1', config })
    assert.deepEqual(valid.errors, [])
    const { versionId } = await sdk.cloud.games.versions.createGameVersion(GAME, {
      displayName: 'sdk 1',
      config,
    })
    const { version } = await sdk.cloud.games.versions.getGameVersionById(GAME, versionId)
    assert.equal(version.config.cdn?.siteId, siteId)
    assert.deepEqual(version.config.cdn?.routes, config.cdn!.routes)
    assert.equal(version.config.matchmaker?.gameModes?.['ranked-duo']?.listable, false)
    assert.equal(version.config.kv, undefined)
    const { game } = await sdk.cloud.games.games.getGameById(GAME)
    assert.equal(game.versions.at(-1)?.versionId, versionId, 'the game lists its versions oldest first')

    // The same name again: validation reports it, creation refuses it.
    const again = await sdk.cloud.games.versions.validateGameVersion(GAME, { displayName: 'sdk 1', config })
    assert.deepEqual(
      again.errors.map((error) => error.path),
      [['display-name', 'not-unique']],
    )
    const refused = await sdkError(
      sdk.cloud.games.versions.createGameVersion(GAME, { displayName: 'sdk 1', config }),
      Rivet.BadRequestError,
      400,
      'VALIDATION_ERROR',
    )
    assert.match(refused.message + JSON.stringify(refused.body), /display-name\.not-unique/)
    // A site that does not exist passes validation but not creation.
    const unknownSite = { ...config, cdn: { ...config.cdn, siteId: UNKNOWN } }
    const check = await sdk.cloud.games.versions.validateGameVersion(GAME, {
      displayName: 'sdk 2',
      config: unknownSite,
    })
    assert.deepEqual(check.errors, [])
    await sdkError(
      sdk.cloud.games.versions.createGameVersion(GAME, { displayName: 'sdk 2', config: unknownSite }),
      Rivet.InternalError,
      500,
      'ERROR',
    )
  })

  test('namespaces.updateGameNamespaceVersion and getGameNamespaceVersionHistoryList', async () => {
    const { namespaceId } = await sdk.cloud.games.namespaces.createGameNamespace(GAME, {
      displayName: 'SDK History',
      nameId: 'sdk-history',
      versionId: LIVE_VERSION,
    })
    const empty = await sdk.cloud.games.namespaces.getGameNamespaceVersionHistoryList(GAME, namespaceId)
    assert.deepEqual(empty.versions, [], 'creating a namespace records no history')
    const older = DEFAULT_SEED.games[0]!.versions[0] as { id: string }
    await sdk.cloud.games.namespaces.updateGameNamespaceVersion(GAME, namespaceId, { versionId: older.id })
    await sdk.cloud.games.namespaces.updateGameNamespaceVersion(GAME, namespaceId, { versionId: older.id })
    await sdk.cloud.games.namespaces.updateGameNamespaceVersion(GAME, namespaceId, {
      versionId: LIVE_VERSION,
    })
    const { versions } = await sdk.cloud.games.namespaces.getGameNamespaceVersionHistoryList(
      GAME,
      namespaceId,
    )
    assert.deepEqual(
      versions.map((entry) => [entry.namespaceId, entry.versionId]),
      [
        [namespaceId, LIVE_VERSION],
        [namespaceId, older.id],
      ],
      'newest first; publishing the live version again is a no-op',
    )
    assert.ok(versions.every((entry) => entry.deployTs instanceof Date))
    const limited = await sdk.cloud.games.namespaces.getGameNamespaceVersionHistoryList(GAME, namespaceId, {
      limit: 1,
      anchor: '0',
    })
    assert.deepEqual(
      limited.versions.map((entry) => entry.versionId),
      [LIVE_VERSION],
    )
    const { namespace } = await sdk.cloud.games.namespaces.getGameNamespaceById(GAME, namespaceId)
    assert.equal(namespace.versionId, LIVE_VERSION)

    await sdkError(
      sdk.cloud.games.namespaces.updateGameNamespaceVersion(GAME, namespaceId, { versionId: UNKNOWN }),
      Rivet.InternalError,
      500,
      'ERROR',
    )
    await sdkError(
      sdk.cloud.games.namespaces.updateGameNamespaceVersion(GAME, namespaceId, { versionId: '1.0.0' }),
      Rivet.BadRequestError,
      400,
      'API_BAD_BODY',
    )
    await sdkError(
      sdk.cloud.games.namespaces.updateGameNamespaceVersion(GAME, UNKNOWN, { versionId: LIVE_VERSION }),
      Rivet.InternalError,
      500,
      'ERROR',
    )
    await sdkError(
      sdk.cloud.games.namespaces.getGameNamespaceVersionHistoryList(GAME, UNKNOWN),
      Rivet.InternalError,
      500,
      'ERROR',
    )
  })

  test('cloud.bootstrap: the service says its CDN domain', async () => {
    const answer = await sdk.cloud.bootstrap()
    assert.equal(answer.cluster, 'oss')
    assert.deepEqual(answer.captcha, {})
    // The SDK of this version does not declare `domains` and passes it through as sent.
    const { domains } = answer as unknown as { domains: { cdn?: string } }
    assert.equal(domains.cdn, 'localhost')
  })

  test('cdn.createGameCdnSite: from 5 MiB a file is a multipart upload in 100 MiB parts (v24.6)', async () => {
    const site = await sdk.cloud.games.cdn.createGameCdnSite(GAME, {
      displayName: 'SDK big site',
      files: [
        { path: 'small.data', contentLength: 5 * MiB - 1, contentType: 'application/octet-stream' },
        { path: 'Build/game.data', contentLength: 250 * MiB, contentType: 'application/octet-stream' },
      ],
    })
    const shapes = site.presignedRequests.map((request) => {
      const query = new URL(request.url).searchParams
      return [
        request.path,
        request.byteOffset,
        request.contentLength,
        query.get('x-id'),
        query.get('partNumber'),
        query.get('uploadId') === site.uploadId,
        query.get('X-Amz-Expires'),
        query.get('X-Amz-SignedHeaders'),
      ]
    })
    assert.deepEqual(shapes, [
      ['small.data', 0, 5 * MiB - 1, 'PutObject', null, false, '3600', 'content-length;content-type;host'],
      ['Build/game.data', 0, 100 * MiB, 'UploadPart', '1', true, '21600', 'content-length;host'],
      ['Build/game.data', 100 * MiB, 100 * MiB, 'UploadPart', '2', true, '21600', 'content-length;host'],
      ['Build/game.data', 200 * MiB, 50 * MiB, 'UploadPart', '3', true, '21600', 'content-length;host'],
    ])
  })

  test('namespaces: CDN basic auth, its users as bcrypt hashes, applied to every host with the config rebuild', async () => {
    const namespaces = sdk.cloud.games.namespaces
    const { namespaceId } = await namespaces.createGameNamespace(GAME, {
      displayName: 'SDK Private',
      nameId: 'sdk-private',
      versionId: LIVE_VERSION,
    })
    await namespaces.addNamespaceDomain(GAME, namespaceId, { domain: 'private.example.com' })
    await fetch(`${emulator.url}/_emulator/domains/private.example.com/verify`, { method: 'POST' })
    const port = new URL(emulator.url).port
    const hosts = [new URL(emulator.namespaceUrl(GAME, namespaceId)).host, `private.example.com:${port}`]
    const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`
    const statusAt = (host: string, authorization?: string) =>
      new Promise<{ status: number; realm: string | undefined }>((resolve, reject) => {
        const headers: Record<string, string> = { host, ...(authorization ? { authorization } : {}) }
        get({ host: '127.0.0.1', port, path: '/', headers }, (res) => {
          res.resume()
          res.on('end', () => resolve({ status: res.statusCode!, realm: res.headers['www-authenticate'] }))
        }).on('error', reject)
      })
    /** The status at `host` now, or once the publish delay has passed when it is not the one awaited. */
    const until = async (host: string, done: (status: number) => boolean) => {
      let { status } = await statusAt(host)
      if (!done(status)) {
        time.advance(PUBLISH_DELAY_MS)
        ;({ status } = await statusAt(host))
      }
      return status
    }
    // A new namespace starts public.
    const fresh = await namespaces.getGameNamespaceById(GAME, namespaceId)
    assert.equal(fresh.namespace.config.cdn.authType, 'none')
    assert.deepEqual(fresh.namespace.config.cdn.authUserList, [])

    // The password must be a bcrypt hash, never the password itself.
    await sdkError(
      namespaces.updateNamespaceCdnAuthUser(GAME, namespaceId, { user: 'alice', password: 'plain-text-1' }),
      Rivet.BadRequestError,
      400,
      'CDN_INVALID_AUTH_USER_PASSWORD',
    )
    const hash = await bcrypt.hash('alice-passphrase', 4)
    await namespaces.updateNamespaceCdnAuthUser(GAME, namespaceId, { user: 'alice', password: hash })
    await namespaces.setNamespaceCdnAuthType(GAME, namespaceId, { authType: 'basic' })
    const made = await namespaces.getGameNamespaceById(GAME, namespaceId)
    assert.equal(made.namespace.config.cdn.authType, 'basic')
    assert.deepEqual(made.namespace.config.cdn.authUserList, [{ user: 'alice' }])

    // Every host asks once the rebuilt config arrives, custom domains included; alice's password passes.
    for (const host of hosts) {
      assert.equal(await until(host, (status) => status === 401), 401, host)
      assert.equal((await statusAt(host)).realm, 'Basic realm="RivetCdn"')
      assert.equal((await statusAt(host, basic('alice:wrong-passphrase'))).status, 401)
      assert.equal((await statusAt(host, basic('bob:alice-passphrase'))).status, 401)
      assert.notEqual((await statusAt(host, basic('alice:alice-passphrase'))).status, 401, host)
    }

    // At most 32 users, counted before the insert: at 32, even replacing one is refused.
    for (let i = 1; i < 32; i++)
      await namespaces.updateNamespaceCdnAuthUser(GAME, namespaceId, { user: `user${i}`, password: hash })
    await sdkError(
      namespaces.updateNamespaceCdnAuthUser(GAME, namespaceId, { user: 'user32', password: hash }),
      Rivet.BadRequestError,
      400,
      'CDN_TOO_MANY_AUTH_USERS',
    )
    await sdkError(
      namespaces.updateNamespaceCdnAuthUser(GAME, namespaceId, { user: 'alice', password: hash }),
      Rivet.BadRequestError,
      400,
      'CDN_TOO_MANY_AUTH_USERS',
    )
    for (let i = 1; i < 32; i++) await namespaces.removeNamespaceCdnAuthUser(GAME, namespaceId, `user${i}`)
    await namespaces.removeNamespaceCdnAuthUser(GAME, namespaceId, 'alice')
    await namespaces.setNamespaceCdnAuthType(GAME, namespaceId, { authType: 'none' })
    const opened = await namespaces.getGameNamespaceById(GAME, namespaceId)
    assert.equal(opened.namespace.config.cdn.authType, 'none')
    assert.deepEqual(opened.namespace.config.cdn.authUserList, [])
    for (const host of hosts) assert.notEqual(await until(host, (status) => status !== 401), 401, host)
  })

  test("the deploy's path: a multipart site, a namespace on a base version, a publish, served once it arrives", async () => {
    const wasm = Buffer.alloc(6 * MiB, 7)
    const site = await sdk.cloud.games.cdn.createGameCdnSite(GAME, {
      displayName: 'SDK wasm',
      files: [
        { path: 'index.html', contentLength: 9, contentType: 'text/html' },
        { path: 'game.wasm', contentLength: wasm.length, contentType: 'application/wasm' },
      ],
    })
    for (const request of site.presignedRequests) {
      const body = request.path === 'index.html' ? '<p>ok</p>' : wasm
      const type = request.path === 'index.html' ? 'text/html' : 'application/wasm'
      const put = await fetch(request.url, { method: 'PUT', body, headers: { 'content-type': type } })
      assert.equal(put.status, 200, await put.text())
    }
    await sdk.cloud.uploads.completeUpload(site.uploadId)
    const { version: live } = await sdk.cloud.games.versions.getGameVersionById(GAME, LIVE_VERSION)
    const { versionId } = await sdk.cloud.games.versions.createGameVersion(GAME, {
      displayName: 'sdk wasm',
      config: {
        cdn: { siteId: site.siteId, routes: [] },
        matchmaker: { ...live.config.matchmaker, lobbyGroups: undefined },
      },
    })
    // Created on the base version (the live one), it serves nothing: the creation race, lost.
    const { namespaceId } = await sdk.cloud.games.namespaces.createGameNamespace(GAME, {
      displayName: 'SDK Deploy',
      nameId: 'sdk-deploy',
      versionId: LIVE_VERSION,
    })
    const url = emulator.namespaceUrl(GAME, namespaceId)
    assert.equal((await fetchLocally(url)).status, 404)
    await sdk.cloud.games.namespaces.updateGameNamespaceVersion(GAME, namespaceId, { versionId })
    assert.equal((await fetchLocally(url)).status, 404, 'the publish has not reached the host yet')
    time.advance(PUBLISH_DELAY_MS - 1)
    assert.equal((await fetchLocally(url)).status, 404, 'nor a moment before the publish delay')
    time.advance(1)
    const answer = await fetchLocally(`${url}game.wasm`)
    assert.equal(answer.status, 200, 'served once the publish delay has passed')
    assert.equal(answer.headers.get('content-type'), 'application/wasm')
    assert.ok(answer.text === wasm.toString(), 'the wasm is served byte-exact')
    const page = await fetchLocally(url)
    assert.equal(page.headers.get('cache-control'), 'no-cache, no-store')
    const { versions } = await sdk.cloud.games.namespaces.getGameNamespaceVersionHistoryList(
      GAME,
      namespaceId,
    )
    assert.deepEqual(
      versions.map((entry) => entry.versionId),
      [versionId],
    )
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
    // API_UNAUTHORIZED (the service's source): the SDK's base error.
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
