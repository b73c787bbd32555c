import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { request } from 'node:http'
import type {
  CreateNamespaceResponse,
  GetLobbyResponse,
  ListAvatarsResponse,
  ListServersResponse,
  GetNamespaceResponse,
  ServiceErrorBody,
  ValidateResponse,
} from '../../src/api/types.ts'
import { DEFAULT_SEED, startEmulator, type Emulator } from '../../src/emulator/index.ts'

const TOKEN = 'gamehost-demo-token'
const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const NAMESPACE = DEFAULT_SEED.games[0]?.namespaces?.[0]?.id ?? ''
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

interface Answer<T> {
  status: number
  headers: Headers
  body: T
}

async function call<T = ServiceErrorBody>(
  emulator: Emulator,
  method: string,
  path: string,
  options: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...options.headers }
  const token = options.token === undefined ? TOKEN : options.token
  if (token !== null) headers.authorization = `Bearer ${token}`
  let body: string | undefined
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
    headers['content-type'] = 'application/json'
  }
  const response = await fetch(`${emulator.url}${path}`, { method, headers, body })
  return { status: response.status, headers: response.headers, body: (await response.json()) as T }
}

function assertError(answer: Answer<unknown>, status: number, code: string): ServiceErrorBody {
  const body = answer.body as ServiceErrorBody
  assert.equal(answer.status, status, JSON.stringify(body))
  assert.equal(body.code, code)
  return body
}

const INTERNAL = { status: 500, code: 'ERROR', message: 'An internal error has occurred.' }

function assertInternalError(answer: Answer<unknown>): void {
  const body = assertError(answer, INTERNAL.status, INTERNAL.code)
  assert.equal(body.message, INTERNAL.message)
}

describe('emulator API', () => {
  let emulator: Emulator
  const logLines: string[] = []

  before(async () => {
    emulator = await startEmulator({
      rateLimit: false,
      serversPageSize: 2,
      log: (line) => logLines.push(line),
    })
  })
  after(() => emulator.close())

  describe('routing, errors and bodies', () => {
    test('an unknown route is 404 API_NOT_FOUND, a wrong method 405, before auth', async () => {
      assertError(await call(emulator, 'GET', '/cloud/nothing-here', { token: null }), 404, 'API_NOT_FOUND')
      assertError(
        await call(emulator, 'DELETE', `/cloud/games/${GAME}/avatars`, { token: null }),
        405,
        'API_METHOD_NOT_ALLOWED',
      )
      assertError(
        await call(emulator, 'POST', `/cloud/games/${GAME}/avatars`, { body: {} }),
        405,
        'API_METHOD_NOT_ALLOWED',
      )
    })

    test('a path segment that is not a UUID matches no route: 404 API_NOT_FOUND', async () => {
      assertError(await call(emulator, 'GET', '/cloud/games/demo-game/avatars'), 404, 'API_NOT_FOUND')
      assertError(await call(emulator, 'GET', `/cloud/games/${GAME}/namespaces/prod`), 404, 'API_NOT_FOUND')
      const lobby = `/cloud/games/${GAME}/namespaces/${NAMESPACE}/logs/lobbies/lobby-1`
      assertError(await call(emulator, 'GET', lobby), 404, 'API_NOT_FOUND')
    })

    test('every error has the service body shape and the ray id of its header', async () => {
      const answer = await call(emulator, 'GET', '/nope')
      const rayId = answer.headers.get('rvt-ray-id')
      assert.match(rayId ?? '', UUID)
      assert.deepEqual(Object.keys(answer.body).sort(), ['code', 'documentation', 'message', 'ray_id'])
      assert.equal(answer.body.ray_id, rayId)
      assert.equal(answer.body.documentation, `${emulator.url}/docs/errors/API_NOT_FOUND`)

      const doc = await fetch(answer.body.documentation ?? '')
      assert.equal(doc.status, 200)
      assert.match(doc.headers.get('content-type') ?? '', /^text\/plain/)
      assert.match(await doc.text(), /API_NOT_FOUND/)
      assert.equal((await fetch(`${emulator.url}/docs/errors/NO_SUCH_CODE`)).status, 404)
    })

    test('successes are 200 JSON with a fresh ray id', async () => {
      const first = await call<ListAvatarsResponse>(emulator, 'GET', `/cloud/games/${GAME}/avatars`)
      const second = await call<ListAvatarsResponse>(emulator, 'GET', `/cloud/games/${GAME}/avatars`)
      assert.equal(first.status, 200)
      assert.match(first.headers.get('content-type') ?? '', /^application\/json/)
      assert.notEqual(first.headers.get('rvt-ray-id'), second.headers.get('rvt-ray-id'))
    })

    test('a chunked request body is refused with API_BAD_BODY', async () => {
      const answer = await new Promise<{ status: number; body: ServiceErrorBody }>((resolve, reject) => {
        const req = request(
          `${emulator.url}/cloud/groups/validate`,
          {
            method: 'POST',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          },
          (res) => {
            const chunks: Buffer[] = []
            res.on('data', (chunk: Buffer) => chunks.push(chunk))
            res.on('end', () => {
              const body = JSON.parse(Buffer.concat(chunks).toString()) as ServiceErrorBody
              resolve({ status: res.statusCode ?? 0, body })
            })
          },
        )
        req.on('error', reject)
        req.write('{"display_name":')
        req.end('"Chunked"}')
      })
      assert.equal(answer.status, 400)
      assert.equal(answer.body.code, 'API_BAD_BODY')
    })

    test('invalid JSON and a missing or mistyped field are API_BAD_BODY', async () => {
      const path = '/cloud/groups/validate'
      assertError(await call(emulator, 'POST', path, { body: '{"display_name":' }), 400, 'API_BAD_BODY')
      assertError(await call(emulator, 'POST', path, { body: '[]' }), 400, 'API_BAD_BODY')
      assertError(await call(emulator, 'POST', path), 400, 'API_BAD_BODY')
      assertError(await call(emulator, 'POST', path, { body: { display_name: 7 } }), 400, 'API_BAD_BODY')
    })

    test('a declared body over 16 MiB is refused at once with 413, before it is sent', async () => {
      const url = new URL(`${emulator.url}/cloud/groups/validate`)
      // 17 MiB declared, 1 KiB sent and the request left open: an answer can only come unread.
      const answer = await new Promise<{ status: number; body: ServiceErrorBody }>((resolve, reject) => {
        const req = request(url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${TOKEN}`,
            'content-type': 'application/json',
            'content-length': String(17 * 1024 * 1024),
          },
        })
        req.on('error', reject)
        req.on('response', (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () => {
            req.destroy()
            resolve({
              status: res.statusCode ?? 0,
              body: JSON.parse(Buffer.concat(chunks).toString()) as ServiceErrorBody,
            })
          })
        })
        req.write(Buffer.alloc(1024, 0x20))
      })
      assert.equal(answer.status, 413)
      assert.equal(answer.body.code, 'API_BODY_TOO_LARGE')
    })

    test('every request is recorded and logged without its query string', async () => {
      const path = `/games/${GAME}/environments/0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15/servers`
      await call(emulator, 'GET', `${path}?include_destroyed=true`)
      assert.deepEqual(emulator.requests.at(-1), { method: 'GET', path, status: 200 })
      assert.equal(logLines.at(-1), `GET ${path} 200`)
    })
  })

  describe('authentication', () => {
    const avatars = `/cloud/games/${GAME}/avatars`

    test('a missing header or a missing Bearer prefix is 401 API_UNAUTHORIZED', async () => {
      assertError(await call(emulator, 'GET', avatars, { token: null }), 401, 'API_UNAUTHORIZED')
      const answer = await call(emulator, 'GET', avatars, { token: null, headers: { authorization: TOKEN } })
      assertError(answer, 401, 'API_UNAUTHORIZED')
    })

    test('an unknown token is 400 TOKEN_INVALID', async () => {
      assertError(await call(emulator, 'GET', avatars, { token: 'not-a-token' }), 400, 'TOKEN_INVALID')
    })

    test('an expired token is 401 CLAIMS_ENTITLEMENT_EXPIRED', async () => {
      const answer = await call(emulator, 'GET', avatars, { token: 'gamehost-expired-token' })
      assertError(answer, 401, 'CLAIMS_ENTITLEMENT_EXPIRED')
    })

    test("a token without the route's game is 403 API_FORBIDDEN", async () => {
      assertError(
        await call(emulator, 'GET', avatars, { token: 'gamehost-other-token' }),
        403,
        'API_FORBIDDEN',
      )
    })

    test('groups.validate needs only a valid token', async () => {
      const body = { display_name: 'Any Group' }
      const answer = await call(emulator, 'POST', '/cloud/groups/validate', {
        token: 'gamehost-other-token',
        body,
      })
      assert.equal(answer.status, 200)
    })

    test('auth is checked before the body', async () => {
      const answer = await call(emulator, 'POST', '/cloud/groups/validate', { token: null, body: 'not json' })
      assertError(answer, 401, 'API_UNAUTHORIZED')
    })
  })

  describe('namespaces', () => {
    const path = `/cloud/games/${GAME}/namespaces`

    test('createGameNamespace stores the namespace and answers its id', async () => {
      const body = {
        display_name: 'QA',
        name_id: 'qa',
        version_id: '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
      }
      const answer = await call<CreateNamespaceResponse>(emulator, 'POST', path, { body })
      assert.equal(answer.status, 200)
      assert.match(answer.body.namespace_id, UUID)
      const created = emulator.namespaces(GAME).find((namespace) => namespace.nameId === 'qa')
      assert.deepEqual(created, {
        namespaceId: answer.body.namespace_id,
        gameId: GAME,
        nameId: 'qa',
        displayName: 'QA',
        versionId: '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
        // Created directly on a version, it has no CDN config: it serves nothing.
        liveVersionId: undefined,
        domains: [],
        pendingDomains: [],
      })
    })

    test('a name_id already used in the game is VALIDATION_ERROR name-id.not-unique', async () => {
      const body = {
        display_name: 'Production',
        name_id: 'prod',
        version_id: '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
      }
      const error = assertError(await call(emulator, 'POST', path, { body }), 400, 'VALIDATION_ERROR')
      assert.equal(error.message, 'Validation error: name-id.not-unique')
      assert.deepEqual(error.metadata, { errors: [{ path: ['name-id', 'not-unique'] }] })
    })

    test('every problem is named as a dotted path', async () => {
      const body = {
        display_name: ' Leading',
        name_id: 'feature--x',
        version_id: '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
      }
      const error = assertError(await call(emulator, 'POST', path, { body }), 400, 'VALIDATION_ERROR')
      assert.equal(error.message, 'Validation error: display-name.invalid, name-id.invalid')
      assert.deepEqual(error.metadata, {
        errors: [{ path: ['display-name', 'invalid'] }, { path: ['name-id', 'invalid'] }],
      })

      const tooLong = {
        display_name: 'x'.repeat(129),
        name_id: 'a'.repeat(17),
        version_id: '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
      }
      const second = assertError(
        await call(emulator, 'POST', path, { body: tooLong }),
        400,
        'VALIDATION_ERROR',
      )
      // The service's name_id pattern has the length in it: a name too long is invalid too (a pair).
      assert.equal(
        second.message,
        'Validation error: display-name.too-long, name-id.too-long, name-id.invalid',
      )
    })

    test('an unknown version is a 500 ERROR, after validation', async () => {
      const body = { display_name: 'Preview', name_id: 'preview', version_id: UNKNOWN_ID }
      assertInternalError(await call(emulator, 'POST', path, { body }))
      assert.equal(emulator.namespaces(GAME).filter((namespace) => namespace.nameId === 'preview').length, 0)
    })

    test('a missing field or a version_id that is not a UUID is API_BAD_BODY', async () => {
      const body = { display_name: 'Preview', name_id: 'preview' }
      assertError(await call(emulator, 'POST', path, { body }), 400, 'API_BAD_BODY')
      const notUuid = { ...body, version_id: 'v1' }
      assertError(await call(emulator, 'POST', path, { body: notUuid }), 400, 'API_BAD_BODY')
    })
  })

  describe('matchmaker config validation', () => {
    const path = `/cloud/games/${GAME}/namespaces/${NAMESPACE}/mm-config/validate`
    const validate = (body: unknown) => call<ValidateResponse>(emulator, 'POST', path, { body })

    test('a valid config has no errors', async () => {
      const answer = await validate({ lobby_count_max: 32, max_players: 16 })
      assert.equal(answer.status, 200)
      assert.deepEqual(answer.body, { errors: [] })
    })

    test('out of range values are reported as error paths', async () => {
      assert.deepEqual((await validate({ lobby_count_max: 0, max_players: 0 })).body, {
        errors: [
          { path: ['lobby-count', 'too-low'] },
          { path: ['max-players', 'too-low'] },
          { path: ['max-players', 'client', 'too-low'] },
          { path: ['max-players', 'vpn', 'too-low'] },
          { path: ['max-players', 'proxy', 'too-low'] },
          { path: ['max-players', 'tor', 'too-low'] },
          { path: ['max-players', 'hosting', 'too-low'] },
        ],
      })
      assert.deepEqual((await validate({ lobby_count_max: 32768, max_players: 1 })).body, {
        errors: [{ path: ['lobby-count', 'too-high'] }],
      })
    })

    test('numbers are signed 32-bit: negative is CLOUD_INVALID_CONFIG, 2^31 or more does not parse', async () => {
      for (const value of [-1, -(2 ** 31)]) {
        assertError(await validate({ lobby_count_max: value, max_players: 4 }), 400, 'CLOUD_INVALID_CONFIG')
        assertError(await validate({ lobby_count_max: 4, max_players: value }), 400, 'CLOUD_INVALID_CONFIG')
      }
      for (const value of [2 ** 31, 2 ** 32, 1.5]) {
        assertError(await validate({ lobby_count_max: value, max_players: 4 }), 400, 'API_BAD_BODY')
        assertError(await validate({ lobby_count_max: 4, max_players: value }), 400, 'API_BAD_BODY')
      }
      const largest = await validate({ lobby_count_max: 4, max_players: 2 ** 31 - 1 })
      assert.equal(largest.status, 200)
    })

    test('a missing or non-numeric value is API_BAD_BODY', async () => {
      assertError(await validate({ lobby_count_max: 4 }), 400, 'API_BAD_BODY')
      assertError(await validate({ lobby_count_max: '4', max_players: 4 }), 400, 'API_BAD_BODY')
    })

    test('an unknown namespace is a 500 ERROR', async () => {
      const unknown = `/cloud/games/${GAME}/namespaces/${UNKNOWN_ID}/mm-config/validate`
      assertInternalError(
        await call(emulator, 'POST', unknown, { body: { lobby_count_max: 4, max_players: 4 } }),
      )
    })
  })

  describe('groups.validate', () => {
    const validate = async (displayName: string) => {
      const body = { display_name: displayName }
      return (await call<ValidateResponse>(emulator, 'POST', '/cloud/groups/validate', { body })).body
    }

    test('reports the error paths of a group display name', async () => {
      assert.deepEqual(await validate('Good Group'), { errors: [] })
      assert.deepEqual(await validate(''), { errors: [{ path: ['too-short'] }] })
      // A pair: the display-name check has the length in it.
      assert.deepEqual(await validate('x'.repeat(25)), {
        errors: [{ path: ['too-long'] }, { path: ['display-name-invalid'] }],
      })
      assert.deepEqual(await validate('Two  Spaces'), { errors: [{ path: ['display-name-invalid'] }] })
      assert.deepEqual(await validate('Taken Group'), { errors: [{ path: ['not-unique'] }] })
    })
  })

  describe('namespace domains', () => {
    const path = `/cloud/games/${GAME}/namespaces/${NAMESPACE}/domains`
    const add = (domain: unknown) => call<Record<string, never>>(emulator, 'POST', path, { body: { domain } })

    test('adds a domain, then refuses invalid, taken and too many domains', async () => {
      const added = await add('play.demo-game.example')
      assert.equal(added.status, 200)
      assert.deepEqual(added.body, {})
      const production = emulator.namespaces(GAME).find((namespace) => namespace.namespaceId === NAMESPACE)
      assert.deepEqual(production?.domains, ['play.demo-game.example'])

      assertError(await add('https://play.demo-game.example'), 400, 'CDN_INVALID_DOMAIN')
      assertError(await add('Play.Example'), 400, 'CDN_INVALID_DOMAIN')
      assertError(await add(''), 400, 'CDN_INVALID_DOMAIN')
      // A domain this namespace has already breaks the service's primary key: 500 ERROR.
      assertInternalError(await add('play.demo-game.example'))
      assertError(await add('play.other-game.example'), 400, 'CLOUD_HOSTNAME_TAKEN')
      assertError(await add(42), 400, 'API_BAD_BODY')

      for (let n = 2; n <= 10; n++) assert.equal((await add(`mirror-${n}.demo-game.example`)).status, 200)
      assertError(await add('mirror-11.demo-game.example'), 400, 'CDN_TOO_MANY_DOMAINS')

      // Read back, then removed: the namespace lists its domains.
      const read = await call<GetNamespaceResponse>(emulator, 'GET', path.replace(/\/domains$/, ''))
      assert.equal(read.status, 200)
      assert.deepEqual(
        read.body.namespace.config.cdn.domains.map((entry) => entry.domain),
        [
          'play.demo-game.example',
          ...Array.from({ length: 9 }, (_, n) => `mirror-${n + 2}.demo-game.example`),
        ],
      )
      for (let n = 2; n <= 10; n++) {
        const removed = await call(emulator, 'DELETE', `${path}/mirror-${n}.demo-game.example`)
        assert.equal(removed.status, 200)
        assert.deepEqual(removed.body, {})
      }
      assert.deepEqual(emulator.namespaces(GAME).find((n) => n.namespaceId === NAMESPACE)?.domains, [
        'play.demo-game.example',
      ])
    })

    test('an unknown namespace is a 500 ERROR', async () => {
      const unknown = `/cloud/games/${GAME}/namespaces/${UNKNOWN_ID}/domains`
      assertInternalError(
        await call(emulator, 'POST', unknown, { body: { domain: 'new.demo-game.example' } }),
      )
    })
  })

  describe('lobbies and avatars', () => {
    const [running, stopped] = DEFAULT_SEED.games[0]?.lobbies ?? []

    test('getNamespaceLobby answers the seeded lobby', async () => {
      for (const lobby of [running, stopped]) {
        const path = `/cloud/games/${GAME}/namespaces/${NAMESPACE}/logs/lobbies/${lobby?.lobby_id}`
        const answer = await call<GetLobbyResponse>(emulator, 'GET', path)
        assert.equal(answer.status, 200)
        // The real shape: metrics beside the lobby (and a copy inside it).
        assert.deepEqual(answer.body, {
          lobby,
          metrics: lobby?.metrics,
          perf_lists: [],
          stdout_presigned_urls: [],
          stderr_presigned_urls: [],
        })
      }
      assert.deepEqual(stopped?.status.stopped, {
        exit_code: 137,
        failed: true,
        stop_ts: '2025-05-05T07:44:52Z',
      })
    })

    test('an unknown lobby or namespace is a 500 ERROR', async () => {
      const base = `/cloud/games/${GAME}/namespaces`
      assertInternalError(await call(emulator, 'GET', `${base}/${NAMESPACE}/logs/lobbies/${UNKNOWN_ID}`))
      assertInternalError(
        await call(emulator, 'GET', `${base}/${UNKNOWN_ID}/logs/lobbies/${running?.lobby_id}`),
      )
    })

    test('listGameCustomAvatars answers the seeded avatars, url only when complete', async () => {
      const answer = await call<ListAvatarsResponse>(emulator, 'GET', `/cloud/games/${GAME}/avatars`)
      assert.equal(answer.status, 200)
      assert.equal(answer.body.custom_avatars.length, 3)
      for (const avatar of answer.body.custom_avatars) assert.equal(avatar.url !== undefined, avatar.complete)
      assert.deepEqual(
        answer.body.custom_avatars.map((avatar) => avatar.display_name),
        ['Wizard', 'Ranger', 'Knight'],
        'newest first',
      )
    })
  })

  describe('servers list', () => {
    const path = `/games/${GAME}/environments/0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15/servers`
    const seeded = DEFAULT_SEED.games[0]?.environments?.[0]?.servers ?? []
    const serverId = (prefix: string) => seeded.find((server) => server.id.startsWith(prefix))?.id ?? ''
    const list = async (query = '') => {
      const answer = await call<ListServersResponse>(emulator, 'GET', `${path}${query}`)
      assert.equal(answer.status, 200, JSON.stringify(answer.body))
      return answer.body.servers.map((server) => server.id.slice(0, 3))
    }

    test('lists running servers newest first, all at once', async () => {
      assert.deepEqual(await list(), ['5fb', '3d9', '1b7'])
      assert.deepEqual(await list('?include_destroyed=false'), ['5fb', '3d9', '1b7'])
    })

    test('with destroyed servers, pages through with the last id as cursor', async () => {
      assert.deepEqual(await list('?include_destroyed=true'), ['5fb', '4ea'])
      assert.deepEqual(await list(`?include_destroyed=true&cursor=${serverId('4ea')}`), ['3d9', '2c8'])
      assert.deepEqual(await list(`?include_destroyed=true&cursor=${serverId('2c8')}`), ['1b7'])
    })

    test('filters by tags', async () => {
      const tags = encodeURIComponent(JSON.stringify({ region: 'eu' }))
      assert.deepEqual(await list(`?tags_json=${tags}`), ['5fb', '1b7'])
      assert.deepEqual(await list(`?tags_json=${tags}&include_destroyed=true`), ['5fb', '2c8'])
      const none = encodeURIComponent(JSON.stringify({ region: 'eu', mode: 'casual' }))
      assert.deepEqual(await list(`?tags_json=${none}`), [])
    })

    test('a bad tags_json or include_destroyed is API_BAD_QUERY_PARAMETER', async () => {
      const nineTags = Object.fromEntries(Array.from({ length: 9 }, (_, n) => [`k${n}`, 'v']))
      for (const tags of [
        'not json',
        '[]',
        'null',
        '{"region":1}',
        JSON.stringify(nineTags),
        JSON.stringify({ ['k'.repeat(33)]: 'v' }),
        JSON.stringify({ region: '' }),
        JSON.stringify({ region: 'v'.repeat(1025) }),
      ]) {
        const answer = await call(emulator, 'GET', `${path}?tags_json=${encodeURIComponent(tags)}`)
        assertError(answer, 400, 'API_BAD_QUERY_PARAMETER')
      }
      assertError(
        await call(emulator, 'GET', `${path}?include_destroyed=yes`),
        400,
        'API_BAD_QUERY_PARAMETER',
      )
    })

    test('an unknown environment is a 500 ERROR, an unknown cursor an empty page', async () => {
      assertInternalError(await call(emulator, 'GET', `/games/${GAME}/environments/${UNKNOWN_ID}/servers`))
      assert.deepEqual(await list(`?cursor=${UNKNOWN_ID}`), [])
      assert.deepEqual(await list(`?include_destroyed=true&cursor=${UNKNOWN_ID}`), [])
    })
  })
})

describe('emulator rate limits', () => {
  let emulator: Emulator
  // On a window's start: windows are fixed quarters of an hour.
  let clock = Date.parse('2025-06-01T12:00:00Z')
  const WINDOW = 15 * 60_000

  before(async () => {
    emulator = await startEmulator({ rateLimit: { writesPerMinute: 2, readsPerMinute: 3 }, now: () => clock })
  })
  after(() => emulator.close())

  test('per client address and endpoint, 15 x the rate in a fixed 15-minute window', async () => {
    const validate = (token = TOKEN) =>
      call(emulator, 'POST', '/cloud/groups/validate', { token, body: { display_name: 'Some Group' } })
    const start = clock
    for (let n = 0; n < 30; n++) {
      assert.equal((await validate()).status, 200)
      clock += 20_000
    }
    const limited = await validate()
    const error = assertError(limited, 429, 'API_RATE_LIMIT')
    assert.equal(error.metadata, start + WINDOW)
    assert.equal(limited.headers.get('retry-after'), new Date(start + WINDOW).toUTCString())
    // Another token from the same address counts in the same window.
    assertError(await validate('gamehost-other-token'), 429, 'API_RATE_LIMIT')

    // Another endpoint has its own count.
    const mmConfig = `/cloud/games/${GAME}/namespaces/${NAMESPACE}/mm-config/validate`
    const body = { lobby_count_max: 1, max_players: 1 }
    assert.equal((await call(emulator, 'POST', mmConfig, { body })).status, 200)

    // Another address has its own count.
    const other = await new Promise<number>((resolve, reject) => {
      const req = request(`${emulator.url}/cloud/groups/validate`, {
        method: 'POST',
        localAddress: '127.0.0.2',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      })
      req.on('error', reject)
      req.on('response', (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      })
      req.end(JSON.stringify({ display_name: 'Some Group' }))
    })
    assert.equal(other, 200)

    clock = start + WINDOW
    assert.equal((await validate()).status, 200)
  })

  test('reads have their own limit', async () => {
    const avatars = `/cloud/games/${GAME}/avatars`
    for (let n = 0; n < 45; n++) assert.equal((await call(emulator, 'GET', avatars)).status, 200)
    assertError(await call(emulator, 'GET', avatars), 429, 'API_RATE_LIMIT')
  })
})

describe('emulator servers order', () => {
  test('newest first, servers created at the same instant by id, descending', async () => {
    const template = DEFAULT_SEED.games[0]!.environments![0]!.servers[0]!
    const environment = '7a2e5c8f-1b4d-4e9a-a3c6-8d1f4b7e0c92'
    const at = (id: string, created_at: number) => ({ ...template, id, environment, created_at })
    const servers = [
      at('10000000-0000-4000-8000-000000000000', 1000),
      at('30000000-0000-4000-8000-000000000000', 2000),
      at('20000000-0000-4000-8000-000000000000', 2000),
      at('40000000-0000-4000-8000-000000000000', 500),
    ]
    const [demo, ...others] = DEFAULT_SEED.games
    const emulator = await startEmulator({
      seed: {
        ...DEFAULT_SEED,
        games: [{ ...demo!, environments: [{ id: environment, servers }] }, ...others],
      },
    })
    try {
      const answer = await call<ListServersResponse>(
        emulator,
        'GET',
        `/games/${GAME}/environments/${environment}/servers`,
      )
      assert.deepEqual(
        answer.body.servers.map((server) => server.id[0]),
        ['3', '2', '1', '4'],
      )
    } finally {
      await emulator.close()
    }
  })
})
