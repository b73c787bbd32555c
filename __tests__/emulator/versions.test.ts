// Versions, publishing and the CDN by Host, against the emulator over HTTP; and the pure version rules
// of src/api/versions.ts and src/emulator/version-rules.ts they are built on.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { request } from 'node:http'
import type { CreateCdnSiteResponse, ServiceErrorBody } from '../../src/api/types.ts'
import { globMatches, globToString, parseGlob, type CdnRoute } from '../../src/api/versions.ts'
import type { VersionConfig } from '../../src/emulator/matchmaker-config.ts'
import { routeForPath, unstorableRoutes, versionProblems } from '../../src/emulator/version-rules.ts'
import { DEFAULT_SEED, startEmulator, type Emulator } from '../../src/emulator/index.ts'
import { virtualTime } from '../support/virtual-time.ts'

const TOKEN = 'gamehost-demo-token'
const GAME = DEFAULT_SEED.games[0]!.id
const NAMESPACE = DEFAULT_SEED.games[0]!.namespaces![0]!.id
const LIVE_VERSION = DEFAULT_SEED.games[0]!.namespaces![0]!.versionId
const OLD_VERSION = (DEFAULT_SEED.games[0]!.versions[0] as { id: string }).id
const OTHER_GAME = DEFAULT_SEED.games[1]!.id
const UNKNOWN = '00000000-0000-4000-8000-000000000000'
const INTERNAL = ['ERROR', 'An internal error has occurred.']

interface Answer<T> {
  status: number
  body: T
}

async function call<T = ServiceErrorBody>(
  emulator: Emulator,
  method: string,
  path: string,
  body?: unknown,
  token = TOKEN,
): Promise<Answer<T>> {
  const response = await fetch(`${emulator.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as T }
}

function assertError(answer: Answer<unknown>, status: number, code: string): ServiceErrorBody {
  const body = answer.body as ServiceErrorBody
  assert.equal(answer.status, status, JSON.stringify(body))
  assert.equal(body.code, code)
  return body
}

function assertInternal(answer: Answer<unknown>): void {
  const body = assertError(answer, 500, 'ERROR')
  assert.deepEqual([body.code, body.message], INTERNAL)
}

/** Creates a site of the files, uploads them and (unless told not to) completes the upload. */
async function site(
  emulator: Emulator,
  files: Record<string, { body: string; type?: string }>,
  { complete = true, game = GAME, token = TOKEN } = {},
): Promise<string> {
  const created = await call<CreateCdnSiteResponse>(
    emulator,
    'POST',
    `/cloud/games/${game}/cdn/sites`,
    {
      display_name: 'Web Client',
      files: Object.entries(files).map(([path, { body, type }]) => ({
        path,
        content_length: Buffer.byteLength(body),
        ...(type ? { content_type: type } : {}),
      })),
    },
    token,
  )
  assert.equal(created.status, 200, JSON.stringify(created.body))
  for (const presigned of created.body.presigned_requests) {
    const file = files[presigned.path]!
    const put = await fetch(presigned.url, {
      method: 'PUT',
      body: file.body,
      headers: file.type ? { 'content-type': file.type } : {},
    })
    assert.equal(put.status, 200)
  }
  if (complete) {
    const done = await call(
      emulator,
      'POST',
      `/cloud/uploads/${created.body.upload_id}/complete`,
      undefined,
      token,
    )
    assert.equal(done.status, 200)
  }
  return created.body.site_id
}

async function readVersion(emulator: Emulator, versionId: string) {
  const answer = await call<{ version: { display_name: string; config: VersionConfig } }>(
    emulator,
    'GET',
    `/cloud/games/${GAME}/versions/${versionId}`,
  )
  assert.equal(answer.status, 200, JSON.stringify(answer.body))
  return answer.body.version
}

/** The live version's matchmaker, without its legacy form: what a client re-posts. */
async function liveMatchmaker(emulator: Emulator) {
  const { config } = await readVersion(emulator, LIVE_VERSION)
  const { lobby_groups: _legacy, ...matchmaker } = config.matchmaker!
  return matchmaker
}

function headerRoute(glob: string, priority: number, ...headers: Array<[string, string]>): CdnRoute {
  return {
    glob,
    priority,
    middlewares: [
      { kind: { custom_headers: { headers: headers.map(([name, value]) => ({ name, value })) } } },
    ],
  }
}

interface HostAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** A request to the emulator's address with another Host header (fetch cannot set it). */
function getWithHost(emulator: Emulator, host: string, path: string, method = 'GET'): Promise<HostAnswer> {
  const url = new URL(emulator.url)
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path, method, headers: { host: `${host}:${url.port}` } },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      },
    )
    req.on('error', reject)
    req.end()
  })
}

describe('version rules (src/emulator/version-rules.ts)', () => {
  test('globs split on "/": "*" within a segment, "**" a whole segment, mixed "**" invalid', () => {
    assert.equal(parseGlob('assets/**suffix'), undefined)
    assert.equal(parseGlob('***'), undefined)
    assert.deepEqual(parseGlob(''), [])
    assert.equal(globToString(parseGlob('**/**/*.html')!), '**/*.html')
    assert.equal(globToString(parseGlob('assets/**')!), 'assets/**/')
    assert.ok(globMatches('**/*.html', '/index.html'))
    assert.ok(globMatches('**/*.html', '/a/b/page.html'))
    assert.ok(!globMatches('*.html', '/a/page.html'), '"*" stays within a segment')
    assert.ok(!globMatches('*', '/'), '"*" needs at least one character')
    assert.ok(globMatches('assets/**', '/assets/x/y.png'))
    assert.ok(!globMatches('index.html', '/'), 'the requested path, before index.html is added')
    assert.ok(!globMatches('**suffix', '/xsuffix'))
  })

  test('the highest-priority matching route of the first 10 applies', () => {
    const routes = [
      { glob: '**', priority: 1 },
      { glob: '**/*.js', priority: 50 },
      { glob: 'game.js', priority: 50 },
      ...Array.from({ length: 7 }, (_, i) => ({ glob: `unused-${i}`, priority: 0 })),
      { glob: 'game.js', priority: 100 },
    ]
    assert.equal(routeForPath(routes, '/game.js'), routes[1], 'the first of equals; the 11th is not read')
    assert.equal(routeForPath(routes, '/index.html'), routes[0])
    assert.equal(routeForPath([], '/'), undefined)
  })

  test('validation paths, in the service order; a route of two headers is valid but unstorable', () => {
    const config: VersionConfig = {
      cdn: {
        routes: [
          headerRoute('', 0, ['', 'x']),
          headerRoute('a/**b', 101, ['n'.repeat(513), 'v'.repeat(1025)]),
          headerRoute('x/*', 0, ['a', '1']),
          headerRoute('x/*', 0, ['a', '1'], ['b', '2']),
        ],
      },
    }
    assert.deepEqual(versionProblems({ displayName: '', config, takenDisplayNames: [] }), [
      ['display-name', 'too-short'],
      ['display-name', 'invalid'],
      ['config', 'cdn', 'no-site-id'],
      ['config', 'cdn', 'routes', '0', 'glob', 'invalid'],
      [
        'config',
        'cdn',
        'routes',
        '0',
        'middlewares',
        '0',
        'custom-headers',
        'headers',
        '0',
        'name',
        'invalid',
      ],
      ['config', 'cdn', 'routes', '1', 'glob', 'invalid'],
      ['config', 'cdn', 'routes', '1', 'priority', 'too-high'],
      [
        'config',
        'cdn',
        'routes',
        '1',
        'middlewares',
        '0',
        'custom-headers',
        'headers',
        '0',
        'name',
        'too-long',
      ],
      [
        'config',
        'cdn',
        'routes',
        '1',
        'middlewares',
        '0',
        'custom-headers',
        'headers',
        '0',
        'value',
        'too-long',
      ],
      ['config', 'cdn', 'routes', '3', 'glob', 'not-unique'],
      ['config', 'matchmaker', 'missing'],
    ])
    assert.deepEqual(unstorableRoutes(config), [3])
  })
})

describe('versions', () => {
  let emulator: Emulator
  let clock = Date.parse('2025-06-15T12:00:00Z')

  before(async () => {
    emulator = await startEmulator({ rateLimit: false, now: () => clock })
  })
  after(() => emulator.close())

  const versions = `/cloud/games/${GAME}/versions`

  test('validate answers every path without creating anything; create refuses them as VALIDATION_ERROR', async () => {
    const matchmaker = await liveMatchmaker(emulator)
    const routes = [...Array.from({ length: 33 }, (_, i) => headerRoute(`r${i}`, 0, ['x-n', String(i)]))]
    routes[1] = {
      glob: 'r1',
      priority: 0,
      middlewares: Array.from({ length: 33 }, () => ({
        kind: { custom_headers: { headers: Array.from({ length: 33 }, () => ({ name: 'a', value: 'b' })) } },
      })),
    }
    routes[2] = headerRoute('r0', 0, ['x', 'y'])
    const body = { display_name: '1.0.0', config: { cdn: { routes }, matchmaker } }
    const answer = await call<{ errors: Array<{ path: string[] }> }>(
      emulator,
      'POST',
      `${versions}/validate`,
      body,
    )
    assert.equal(answer.status, 200)
    const paths = answer.body.errors.map((error) => error.path.join('.'))
    assert.deepEqual(paths.slice(0, 4), [
      'display-name.not-unique',
      'config.cdn.no-site-id',
      'config.cdn.routes-meta.too-many',
      'config.cdn.routes.1.middlewares-meta.too-many',
    ])
    assert.ok(paths.includes('config.cdn.routes.1.middlewares.0.custom-headers.headers-meta.too-many'))
    assert.ok(
      paths.includes('config.cdn.routes.1.middlewares.2.not-unique'),
      'a third custom_headers middleware',
    )
    assert.ok(!paths.includes('config.cdn.routes.1.middlewares.1.not-unique'), 'two pass')
    assert.ok(paths.includes('config.cdn.routes.2.glob.not-unique'))
    assert.ok(!paths.some((path) => path.startsWith('config.cdn.routes.32')), 'only 32 routes are read')

    const count = [...emulator.requests].length
    const refused = assertError(await call(emulator, 'POST', versions, body), 400, 'VALIDATION_ERROR')
    assert.match(refused.message, /^Validation error: display-name\.not-unique, config\.cdn\.no-site-id, /)
    assert.ok(emulator.requests.length > count)
    const names = (
      await call<{ game: { versions: Array<{ display_name: string }> } }>(
        emulator,
        'GET',
        `/cloud/games/${GAME}`,
      )
    ).body.game.versions.map((version) => version.display_name)
    assert.deepEqual(names, ['0.0.1', '0.9.0', '1.0.0'], 'nothing was created')
  })

  test('the matchmaker must be there, with game modes that have a build', async () => {
    const validate = async (config: unknown) =>
      (
        await call<{ errors: Array<{ path: string[] }> }>(emulator, 'POST', `${versions}/validate`, {
          display_name: 'mm',
          config,
        })
      ).body.errors.map((error) => error.path.join('.'))
    assert.deepEqual(await validate({}), ['config.matchmaker.missing'])
    assert.deepEqual(await validate({ matchmaker: {} }), ['config.matchmaker.game-modes-meta.too-few'])
    assert.deepEqual(
      await validate({ matchmaker: { game_modes: { a: { max_players: 0 }, b: { docker: {} } } } }),
      [
        'config.matchmaker.game-modes.*a*.player-counts.max-players-normal.too-low',
        'config.matchmaker.game-modes.*a*.player-counts.max-players-direct.too-low',
        'config.matchmaker.game-modes.*a*.player-counts.max-players-party.too-low',
        'config.matchmaker.game-modes.*a*.no-runtime',
        'config.matchmaker.game-modes.*b*.no-build',
      ],
    )
    // A region the service does not know; the game mode takes the matchmaker's regions and docker.
    const { docker } = (await liveMatchmaker(emulator)).game_modes!.default!
    assert.deepEqual(
      await validate({ matchmaker: { regions: { 'mars-1': {} }, docker, game_modes: { c: {} } } }),
      ['config.matchmaker.game-modes.*c*.regions.0.invalid'],
    )
  })

  test('refusals before validation: a body that does not parse, a negative priority, a negative player count', async () => {
    const matchmaker = await liveMatchmaker(emulator)
    for (const path of [versions, `${versions}/validate`]) {
      assertError(await call(emulator, 'POST', path, { display_name: 'x' }), 400, 'API_BAD_BODY')
      assertError(
        await call(emulator, 'POST', path, { display_name: 'x', config: { cdn: { site_id: 'site' } } }),
        400,
        'API_BAD_BODY',
      )
      const priority = { cdn: { routes: [headerRoute('a', -1, ['x', 'y'])] }, matchmaker }
      assertInternal(await call(emulator, 'POST', path, { display_name: 'x', config: priority }))
      const kindless = {
        cdn: { routes: [{ glob: 'a', priority: 0, middlewares: [{ kind: {} }] }] },
        matchmaker,
      }
      assertInternal(await call(emulator, 'POST', path, { display_name: 'x', config: kindless }))
      const players = { matchmaker: { ...matchmaker, max_players: -1, game_modes: { a: {} } } }
      const negative = assertError(
        await call(emulator, 'POST', path, { display_name: 'x', config: players }),
        400,
        'MATCHMAKER_INVALID_VERSION_CONFIG',
      )
      assert.match(negative.message, /max_players/)
    }
  })

  test('creation needs the CDN site to exist, be the game’s and be completely uploaded', async () => {
    const matchmaker = await liveMatchmaker(emulator)
    const incomplete = await site(emulator, { 'index.html': { body: 'x' } }, { complete: false })
    const others = await site(
      emulator,
      { 'index.html': { body: 'x' } },
      { game: OTHER_GAME, token: 'gamehost-other-token' },
    )
    for (const [name, siteId] of [
      ['unknown', UNKNOWN],
      ['incomplete', incomplete],
      ['other game', others],
    ] as const) {
      const body = { display_name: `site ${name}`, config: { cdn: { site_id: siteId }, matchmaker } }
      const valid = await call<{ errors: unknown[] }>(emulator, 'POST', `${versions}/validate`, body)
      assert.deepEqual(valid.body.errors, [], `${name}: validation does not look at the site`)
      assertInternal(await call(emulator, 'POST', versions, body))
      // Refused before anything is created: the name is still free.
      const again = await call<{ errors: unknown[] }>(emulator, 'POST', `${versions}/validate`, body)
      assert.deepEqual(again.body.errors, [], name)
    }
  })

  test('a route with two headers fails creation with a 500 and leaves a half-made version behind', async () => {
    const matchmaker = await liveMatchmaker(emulator)
    const siteId = await site(emulator, { 'index.html': { body: '<h1>half</h1>', type: 'text/html' } })
    const config = {
      cdn: {
        site_id: siteId,
        routes: [headerRoute('**', 0, ['x-one', '1']), headerRoute('*.html', 5, ['x-a', 'a'], ['x-b', 'b'])],
      },
      matchmaker,
    }
    const valid = await call<{ errors: unknown[] }>(emulator, 'POST', `${versions}/validate`, {
      display_name: 'half made',
      config,
    })
    assert.deepEqual(valid.body.errors, [])
    assertInternal(await call(emulator, 'POST', versions, { display_name: 'half made', config }))

    const game = await call<{ game: { versions: Array<{ version_id: string; display_name: string }> } }>(
      emulator,
      'GET',
      `/cloud/games/${GAME}`,
    )
    const half = game.body.game.versions.at(-1)!
    assert.equal(half.display_name, 'half made')
    const read = await readVersion(emulator, half.version_id)
    assert.deepEqual(read.config, { cdn: { site_id: siteId, routes: [] } }, 'no routes, no matchmaker')
    const again = assertError(
      await call(emulator, 'POST', versions, {
        display_name: 'half made',
        config: { ...config, cdn: { site_id: siteId } },
      }),
      400,
      'VALIDATION_ERROR',
    )
    assert.deepEqual(again.metadata, { errors: [{ path: ['display-name', 'not-unique'] }] })
  })

  test('posting the read config back with lobby_groups resets what only game_modes carry', async () => {
    const live = await readVersion(emulator, LIVE_VERSION)
    const ranked = live.config.matchmaker!.game_modes!['ranked-duo']!
    assert.deepEqual(
      [ranked.listable, ranked.taggable, ranked.allow_dynamic_max_players],
      [false, true, true],
    )
    assert.ok(ranked.actions)
    assert.equal(live.config.matchmaker!.lobby_groups!.length, 2)

    const created = await call<{ version_id: string }>(emulator, 'POST', versions, {
      display_name: 'reposted',
      config: live.config,
    })
    assert.equal(created.status, 200, JSON.stringify(created.body))
    const reposted = (await readVersion(emulator, created.body.version_id)).config.matchmaker!
    const after = reposted.game_modes!['ranked-duo']!
    assert.deepEqual([after.listable, after.taggable, after.allow_dynamic_max_players], [true, false, false])
    assert.equal(after.actions, undefined)
    // What the legacy form holds survives: players, regions, tiers, the build.
    assert.equal(after.max_players, ranked.max_players)
    assert.deepEqual(after.regions, ranked.regions)
    assert.deepEqual(after.docker, ranked.docker)
    assert.deepEqual(reposted.lobby_groups, live.config.matchmaker!.lobby_groups)
  })

  test('kv and identity are accepted and not kept; a version is read as created', async () => {
    const matchmaker = await liveMatchmaker(emulator)
    const config = { matchmaker, kv: {}, identity: { custom_display_names: [{ display_name: 'Guest' }] } }
    const created = await call<{ version_id: string }>(emulator, 'POST', versions, {
      display_name: 'kv',
      config,
    })
    assert.equal(created.status, 200, JSON.stringify(created.body))
    const read = await readVersion(emulator, created.body.version_id)
    assert.deepEqual(Object.keys(read.config), ['matchmaker'])
    assert.deepEqual(read.config.matchmaker!.game_modes, matchmaker.game_modes)
    assertInternal(await call(emulator, 'GET', `${versions}/${UNKNOWN}`))
    const otherVersion = DEFAULT_SEED.games[1]!.versions[0] as string
    assertInternal(await call(emulator, 'GET', `${versions}/${otherVersion}`))
    assertError(
      await call(emulator, 'PUT', `${versions}/${created.body.version_id}`, {}),
      405,
      'API_METHOD_NOT_ALLOWED',
    )
  })

  test('reserve-name hands out "YYYY.MM (N)" names, counting per month', async () => {
    const reserve = async () =>
      (await call<{ version_display_name: string }>(emulator, 'POST', `${versions}/reserve-name`, {})).body
        .version_display_name
    assert.equal(await reserve(), '2025.06 (1)')
    assert.equal(await reserve(), '2025.06 (2)')
    clock = Date.parse('2025-07-01T00:00:00Z')
    assert.equal(await reserve(), '2025.07 (1)')
    clock = Date.parse('2025-06-15T12:00:00Z')
    assert.equal(await reserve(), '2025.06 (3)')
  })
})

describe('publishing and the CDN by Host', () => {
  let emulator: Emulator

  before(async () => {
    // A publish reaches the host at once here; the delay has its own tests below.
    emulator = await startEmulator({ rateLimit: false, publishDelayMs: 0 })
  })
  after(() => emulator.close())

  const history = (namespaceId = NAMESPACE, query = '') =>
    call<{ versions: Array<{ namespace_id: string; version_id: string; deploy_ts: string }> }>(
      emulator,
      'GET',
      `/cloud/games/${GAME}/namespaces/${namespaceId}/version-history${query}`,
    )
  const publish = (versionId: unknown, namespaceId = NAMESPACE) =>
    call(emulator, 'PUT', `/cloud/games/${GAME}/namespaces/${namespaceId}/version`, { version_id: versionId })

  async function versionWithSite(
    name: string,
    files: Record<string, { body: string; type?: string }>,
    routes: CdnRoute[] = [],
  ) {
    const siteId = await site(emulator, files)
    const matchmaker = await liveMatchmaker(emulator)
    const created = await call<{ version_id: string }>(emulator, 'POST', `/cloud/games/${GAME}/versions`, {
      display_name: name,
      config: { cdn: { site_id: siteId, routes }, matchmaker },
    })
    assert.equal(created.status, 200, JSON.stringify(created.body))
    return created.body.version_id
  }

  test('the emulator names the CDN domain and each namespace’s host', () => {
    assert.equal(emulator.cdnDomain, 'localhost')
    assert.equal(emulator.namespaceHost(GAME, NAMESPACE), 'demo-game--prod.localhost')
    assert.equal(
      emulator.namespaceUrl(GAME, NAMESPACE),
      `http://demo-game--prod.localhost:${new URL(emulator.url).port}/`,
    )
    assert.throws(() => emulator.namespaceHost(GAME, UNKNOWN), /no namespace/)
  })

  test('publish: a history newest first, a no-op for the live version, refusals', async () => {
    assert.deepEqual((await history()).body, { versions: [] }, 'the seeded namespace has no history')
    assert.deepEqual((await publish(LIVE_VERSION)).body, {})
    assert.deepEqual((await history()).body.versions, [], 'already live: no entry')
    assert.equal((await publish(OLD_VERSION)).status, 200)
    assert.equal((await publish(LIVE_VERSION)).status, 200)
    const { versions } = (await history()).body
    assert.deepEqual(
      versions.map((entry) => [entry.namespace_id, entry.version_id]),
      [
        [NAMESPACE, LIVE_VERSION],
        [NAMESPACE, OLD_VERSION],
      ],
    )
    assert.ok(versions.every((entry) => !Number.isNaN(Date.parse(entry.deploy_ts))))
    assert.deepEqual(
      emulator.versionHistory(GAME, NAMESPACE).map((entry) => entry.versionId),
      [OLD_VERSION, LIVE_VERSION],
    )
    assert.equal((await history(NAMESPACE, '?limit=1&anchor=123')).body.versions.length, 1)
    assert.deepEqual((await history(NAMESPACE, '?limit=0')).body.versions, [])
    assertError(await history(NAMESPACE, '?limit=many'), 400, 'API_BAD_QUERY')
    assertError(await history(NAMESPACE, '?limit=-1'), 400, 'API_BAD_QUERY')
    assertInternal(await history(NAMESPACE, '?anchor=yesterday'))
    assertInternal(await history(UNKNOWN))

    assertInternal(await publish(UNKNOWN))
    assertInternal(await publish(DEFAULT_SEED.games[1]!.versions[0]))
    assertError(await publish('1.0.0'), 400, 'API_BAD_BODY')
    assertError(await publish(7), 400, 'API_BAD_BODY')
    assertInternal(await publish(LIVE_VERSION, UNKNOWN))
    assertError(await publish(LIVE_VERSION, 'prod'), 404, 'API_NOT_FOUND')
    assertError(
      await call(emulator, 'POST', `/cloud/games/${GAME}/namespaces/${NAMESPACE}/version`, {
        version_id: LIVE_VERSION,
      }),
      405,
      'API_METHOD_NOT_ALLOWED',
    )
  })

  test('a namespace’s host serves its live version’s site with the route’s header, then the next one’s', async () => {
    const host = emulator.namespaceHost(GAME, NAMESPACE)
    assert.equal((await getWithHost(emulator, host, '/')).status, 404, 'the seeded version has no site')

    const first = await versionWithSite(
      'site one',
      {
        'index.html': { body: '<h1>one</h1>', type: 'text/html' },
        'game.js': { body: 'one()', type: 'text/javascript' },
        'docs/index.html': { body: 'docs one', type: 'text/html' },
      },
      [
        headerRoute('**', 0, ['x-route', 'everything']),
        headerRoute('*.js', 10, ['cache-control', 'public, max-age=60']),
        headerRoute('index.html', 20, ['x-route', 'index']),
      ],
    )
    assert.equal((await publish(first)).status, 200)

    const index = await getWithHost(emulator, host, '/')
    assert.equal(index.status, 200)
    assert.equal(index.body, '<h1>one</h1>')
    assert.equal(index.headers['content-type'], 'text/html')
    assert.equal(index.headers['x-route'], 'everything', '"index.html" does not match the path "/"')
    assert.equal((await getWithHost(emulator, host, '/index.html')).headers['x-route'], 'index')
    const script = await getWithHost(emulator, host, '/game.js?v=1')
    assert.deepEqual([script.body, script.headers['content-type']], ['one()', 'text/javascript'])
    assert.equal(script.headers['cache-control'], 'public, max-age=60')
    assert.equal(script.headers['x-route'], undefined, 'one route applies: the highest-priority match')
    assert.equal((await getWithHost(emulator, host, '/docs/')).body, 'docs one')
    const missing = await getWithHost(emulator, host, '/missing.png')
    assert.equal(missing.status, 404)
    assert.equal(missing.headers['x-route'], 'everything')
    const head = await getWithHost(emulator, host, '/game.js', 'HEAD')
    assert.deepEqual([head.status, head.headers['content-length'], head.body], [200, '5', ''])
    assert.equal((await getWithHost(emulator, host, '/', 'POST')).status, 404)
    // The port is ignored, and so are case and a trailing dot.
    assert.equal((await getWithHost(emulator, 'Demo-Game--Prod.localhost.', '/')).body, '<h1>one</h1>')

    const second = await versionWithSite('site two', {
      'index.html': { body: '<h1>two</h1>', type: 'text/html' },
    })
    assert.equal((await publish(second)).status, 200)
    const next = await getWithHost(emulator, host, '/')
    assert.deepEqual([next.status, next.body, next.headers['x-route']], [200, '<h1>two</h1>', undefined])
    assert.equal((await getWithHost(emulator, host, '/game.js')).status, 404)
    // The first site is still there under /_sites/.
    const siteId = (await readVersion(emulator, first)).config.cdn!.site_id!
    assert.equal(await (await fetch(`${emulator.siteUrl(siteId)}game.js`)).text(), 'one()')
  })

  test('the namespace named prod is served at the game’s host too, every namespace at its custom domains', async () => {
    // The seed's game has prod, as a new game of the service has.
    const prod = NAMESPACE
    const domain = await call(emulator, 'POST', `/cloud/games/${GAME}/namespaces/${prod}/domains`, {
      domain: 'play.demo-game.example',
    })
    assert.equal(domain.status, 200)
    const version = await versionWithSite('prod site', { 'index.html': { body: 'prod', type: 'text/html' } })
    assert.equal((await publish(version, prod)).status, 200)
    for (const host of ['demo-game--prod.localhost', 'demo-game.localhost']) {
      assert.equal((await getWithHost(emulator, host, '/')).body, 'prod', host)
    }
    // The custom domain is pending until its DNS points at the namespace: not served, it is the API.
    const pending = await getWithHost(emulator, 'play.demo-game.example', '/')
    assertError({ status: pending.status, body: JSON.parse(pending.body) }, 404, 'API_NOT_FOUND')
    emulator.verifyDomain('play.demo-game.example')
    assert.equal((await getWithHost(emulator, 'play.demo-game.example', '/')).body, 'prod')
    // Any other host is the API.
    const api = await getWithHost(emulator, 'elsewhere.localhost', `/cloud/games/${GAME}`)
    assert.equal(api.status, 401)
    assert.equal((JSON.parse(api.body) as ServiceErrorBody).code, 'API_UNAUTHORIZED')
  })

  test('cdnDomain is an option', async () => {
    const other = await startEmulator({ rateLimit: false, cdnDomain: 'rivet.test' })
    try {
      assert.equal(other.namespaceHost(GAME, NAMESPACE), 'demo-game--prod.rivet.test')
    } finally {
      await other.close()
    }
    await assert.rejects(startEmulator({ cdnDomain: 'http://x' }), /cdnDomain must be a host name/)
  })

  test('a client that goes away mid-file is no error of the emulator', async (t) => {
    const errors = t.mock.method(console, 'error', () => {})
    const host = emulator.namespaceHost(GAME, NAMESPACE)
    const big = await versionWithSite('site big', { 'index.html': { body: 'x'.repeat(16 * 1024 * 1024) } })
    assert.equal((await publish(big)).status, 200)
    const url = new URL(emulator.url)
    const before = emulator.requests.length
    await new Promise<void>((resolve, reject) => {
      const req = request({
        host: url.hostname,
        port: url.port,
        path: '/',
        headers: { host: `${host}:${url.port}` },
      })
      req.on('response', (res) => {
        assert.equal(res.statusCode, 200)
        res.once('data', () => {
          req.destroy()
          resolve()
        })
      })
      req.on('error', (error) => (req.destroyed ? undefined : reject(error)))
      req.end()
    })
    while (!emulator.requests.slice(before).some((r) => r.method === 'GET' && r.path === '/'))
      await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(
      errors.mock.calls.map((call) => String(call.arguments[0])),
      [],
      'nothing said on the emulator’s stderr',
    )
  })
})

describe('the service as it is: going live late or never, pending domains, the page layer, route order', () => {
  let emulator: Emulator
  const DELAY_MS = 250
  // The publish delay runs on virtual time: what a host serves "later" is decided by the clock the
  // test moves, not by how fast a busy machine gets to the request.
  const time = virtualTime()

  before(async () => {
    emulator = await startEmulator({
      rateLimit: false,
      publishDelayMs: DELAY_MS,
      faults: { lostPublishes: [3] },
      timer: time.timer,
    })
  })
  after(() => emulator.close())

  const createNamespace = async (nameId: string, target = emulator) => {
    const created = await call<{ namespace_id: string }>(target, 'POST', `/cloud/games/${GAME}/namespaces`, {
      display_name: nameId,
      name_id: nameId,
      version_id: LIVE_VERSION,
    })
    assert.equal(created.status, 200, JSON.stringify(created.body))
    return created.body.namespace_id
  }
  const publish = (namespaceId: string, versionId: string, target = emulator) =>
    call(target, 'PUT', `/cloud/games/${GAME}/namespaces/${namespaceId}/version`, { version_id: versionId })
  const addDomain = (namespaceId: string, domain: string, target = emulator) =>
    call(target, 'POST', `/cloud/games/${GAME}/namespaces/${namespaceId}/domains`, { domain })
  async function versionWithSite(target: Emulator, name: string, body: string, routes: CdnRoute[] = []) {
    const siteId = await site(target, { 'index.html': { body, type: 'text/html' } })
    const created = await call<{ version_id: string }>(target, 'POST', `/cloud/games/${GAME}/versions`, {
      display_name: name,
      config: { cdn: { site_id: siteId, routes }, matchmaker: await liveMatchmaker(target) },
    })
    assert.equal(created.status, 200, JSON.stringify(created.body))
    return created.body.version_id
  }
  /** The body the host serves at `/` once `ms` have passed. */
  const servedAfter = async (host: string, ms: number) => {
    time.advance(ms)
    const answer = await getWithHost(emulator, host, '/')
    return answer.status === 200 ? answer.body : answer.status
  }

  test('a namespace created on a version serves nothing; a publish reaches its host after the delay', async () => {
    const one = await versionWithSite(emulator, 'late one', 'one')
    const two = await versionWithSite(emulator, 'late two', 'two')
    const namespaceId = await createNamespace('late')
    const host = emulator.namespaceHost(GAME, namespaceId)
    assert.equal(await servedAfter(host, 2 * DELAY_MS), 404, 'the creation race, lost: no CDN config')
    assert.equal((await publish(namespaceId, one)).status, 200)
    assert.equal(await servedAfter(host, 0), 404, 'not yet')
    assert.equal(await servedAfter(host, DELAY_MS - 1), 404, 'not yet, a moment before the delay')
    assert.equal(await servedAfter(host, 1), 'one')
    assert.equal((await publish(namespaceId, two)).status, 200)
    assert.equal(await servedAfter(host, 0), 'one', 'the old build until the router loads the new one')
    assert.equal(await servedAfter(host, DELAY_MS + 50), 'two')
    const [view] = emulator.namespaces(GAME).filter((ns) => ns.namespaceId === namespaceId)
    assert.deepEqual([view?.versionId, view?.liveVersionId], [two, two])
  })

  test('the lostPublishes fault: a publish answers {} but never reaches the host; the next one does', async () => {
    // Publishes 1 and 2 were the previous test's: this namespace's first one is publish 3, lost.
    const namespaceId = await createNamespace('lost')
    const host = emulator.namespaceHost(GAME, namespaceId)
    const lost = await versionWithSite(emulator, 'lost one', 'lost')
    assert.deepEqual((await publish(namespaceId, lost)).body, {})
    assert.equal(await servedAfter(host, 2 * DELAY_MS), 404)
    assert.equal(emulator.faults.publishesLost, 1)
    assert.deepEqual(
      emulator.versionHistory(GAME, namespaceId).map((entry) => entry.versionId),
      [lost],
      'the service recorded it',
    )
    assert.ok(emulator.requests.some((entry) => entry.method === 'PUT' && entry.fault === 'publish-lost'))
    assert.equal((await publish(namespaceId, LIVE_VERSION)).status, 200)
    assert.equal((await publish(namespaceId, lost)).status, 200)
    assert.equal(await servedAfter(host, DELAY_MS + 50), 'lost')
  })

  test('adding a domain rebuilds the CDN config of a namespace that had none', async () => {
    const namespaceId = await createNamespace('domain-fix')
    const version = await versionWithSite(emulator, 'domain fix', 'fixed')
    // Creating a namespace directly on the new version: still nothing, until a domain is added.
    const direct = await call<{ namespace_id: string }>(emulator, 'POST', `/cloud/games/${GAME}/namespaces`, {
      display_name: 'Direct',
      name_id: 'direct',
      version_id: version,
    })
    const host = emulator.namespaceHost(GAME, direct.body.namespace_id)
    assert.equal(await servedAfter(host, 2 * DELAY_MS), 404)
    assert.equal((await addDomain(direct.body.namespace_id, 'direct.example.com')).status, 200)
    assert.equal(await servedAfter(host, DELAY_MS + 50), 'fixed')
    assert.ok(namespaceId)
  })

  test('domains: pending with their CNAME, served once verified; at most 10 pending; none under the CDN domain', async () => {
    const namespaceId = await createNamespace('domains')
    assertError(await addDomain(namespaceId, 'preview.localhost'), 400, 'CDN_INVALID_DOMAIN')
    assertError(await addDomain(namespaceId, 'localhost'), 400, 'CDN_INVALID_DOMAIN')
    // The game already holds one pending domain (the previous test's).
    for (let i = 1; i <= 9; i++) assert.equal((await addDomain(namespaceId, `d${i}.example.com`)).status, 200)
    const other = await createNamespace('domains-two')
    assertError(await addDomain(other, 'd10.example.com'), 400, 'CLOUD_TOO_MANY_PENDING_HOSTNAMES_FOR_GROUP')
    const read = await call<{
      namespace: { config: { cdn: { domains: Array<Record<string, unknown>> } } }
    }>(emulator, 'GET', `/cloud/games/${GAME}/namespaces/${namespaceId}`)
    assert.deepEqual(read.body.namespace.config.cdn.domains[0], {
      domain: 'd1.example.com',
      create_ts: read.body.namespace.config.cdn.domains[0]!.create_ts,
      verification_status: 'pending',
      verification_method: { http: { cname_record: 'demo-game--domains.localhost' } },
      verification_errors: [],
    })
    // Verified through the emulator's own route (no token), one frees a place.
    const verify = await fetch(`${emulator.url}/_emulator/domains/d1.example.com/verify`, { method: 'POST' })
    assert.deepEqual(
      [verify.status, await verify.json()],
      [200, { domain: 'd1.example.com', verification_status: 'active' }],
    )
    const unknown = await fetch(`${emulator.url}/_emulator/domains/nowhere.example.com/verify`, {
      method: 'POST',
    })
    assert.equal(unknown.status, 404)
    await unknown.body?.cancel()
    assert.equal((await addDomain(other, 'd10.example.com')).status, 200)
    assert.throws(() => emulator.verifyDomain('nowhere.example.com'), /no namespace has the domain/)
    // Removing a pending domain frees a place too.
    const removed = await call(
      emulator,
      'DELETE',
      `/cloud/games/${GAME}/namespaces/${other}/domains/d10.example.com`,
    )
    assert.equal(removed.status, 200)
    assert.equal((await addDomain(other, 'd11.example.com')).status, 200)
  })

  test('verifyDomains "at-once": a domain is active and served when added', async () => {
    const atOnce = await startEmulator({ rateLimit: false, publishDelayMs: 0, verifyDomains: 'at-once' })
    try {
      const namespaceId = await createNamespace('at-once', atOnce)
      const version = await versionWithSite(atOnce, 'at once', 'at once')
      assert.equal((await publish(namespaceId, version, atOnce)).status, 200)
      assert.equal((await addDomain(namespaceId, 'at-once.example.com', atOnce)).status, 200)
      assert.equal((await getWithHost(atOnce, 'at-once.example.com', '/')).body, 'at once')
      const read = await call<{
        namespace: { config: { cdn: { domains: Array<{ verification_status: string }> } } }
      }>(atOnce, 'GET', `/cloud/games/${GAME}/namespaces/${namespaceId}`)
      assert.equal(read.body.namespace.config.cdn.domains[0]?.verification_status, 'active')
    } finally {
      await atOnce.close()
    }
    await assert.rejects(startEmulator({ verifyDomains: 'later' as 'pending' }), /verifyDomains must be/)
  })

  test('serveOnCreate: the creation race won, a namespace serves the version it was created on', async () => {
    const won = await startEmulator({ rateLimit: false, publishDelayMs: 0, serveOnCreate: true })
    try {
      const version = await versionWithSite(won, 'won', 'won')
      const created = await call<{ namespace_id: string }>(won, 'POST', `/cloud/games/${GAME}/namespaces`, {
        display_name: 'Won',
        name_id: 'won',
        version_id: version,
      })
      const host = won.namespaceHost(GAME, created.body.namespace_id)
      assert.equal((await getWithHost(won, host, '/')).body, 'won')
    } finally {
      await won.close()
    }
  })

  test('the page layer: on pages Cache-Control is "no-cache, no-store" and three headers are dropped', async () => {
    const routes = [
      headerRoute('**', 0, ['cache-control', 'public, max-age=600']),
      headerRoute('**/*.js', 1, ['content-security-policy', "default-src 'self'"]),
      headerRoute('**/*.html', 2, ['x-frame-options', 'DENY']),
      headerRoute('**/*/', 3, ['x-xss-protection', '1']),
    ]
    const paths = ['/', '/about.html', '/docs/', '/missing.html', '/game.js']
    const served = async (pageLayer: boolean) => {
      const target = await startEmulator({ rateLimit: false, publishDelayMs: 0, pageLayer })
      try {
        const siteId = await site(target, {
          'index.html': { body: 'index', type: 'text/html' },
          'about.html': { body: 'about', type: 'text/html' },
          'docs/index.html': { body: 'docs', type: 'text/html' },
          'game.js': { body: 'js', type: 'text/javascript' },
        })
        const created = await call<{ version_id: string }>(target, 'POST', `/cloud/games/${GAME}/versions`, {
          display_name: 'page layer',
          config: { cdn: { site_id: siteId, routes }, matchmaker: await liveMatchmaker(target) },
        })
        assert.equal(created.status, 200, JSON.stringify(created.body))
        const namespaceId = await createNamespace('pages', target)
        assert.equal((await publish(namespaceId, created.body.version_id, target)).status, 200)
        const host = target.namespaceHost(GAME, namespaceId)
        const answers: Record<string, Record<string, unknown>> = {}
        for (const path of paths) {
          const { headers } = await getWithHost(target, host, path)
          answers[path] = {
            'cache-control': headers['cache-control'],
            'content-security-policy': headers['content-security-policy'],
            'x-frame-options': headers['x-frame-options'],
            'x-xss-protection': headers['x-xss-protection'],
          }
        }
        // /_sites/ is the emulator's own view of a site, not the CDN: no page layer.
        const direct = await fetch(`${target.siteUrl(siteId)}index.html`)
        assert.equal(direct.headers.get('cache-control'), null)
        await direct.body?.cancel()
        return answers
      } finally {
        await target.close()
      }
    }
    const none = {
      'cache-control': undefined,
      'content-security-policy': undefined,
      'x-frame-options': undefined,
      'x-xss-protection': undefined,
    }
    const page = { ...none, 'cache-control': 'no-cache, no-store' }
    assert.deepEqual(await served(true), {
      '/': page,
      '/about.html': page,
      '/docs/': page,
      '/missing.html': page,
      // Not a page: the highest-priority route's header only.
      '/game.js': { ...none, 'content-security-policy': "default-src 'self'" },
    })
    // pageLayer: false serves the routes' headers as set.
    assert.deepEqual(await served(false), {
      '/': { ...none, 'cache-control': 'public, max-age=600' },
      '/about.html': { ...none, 'x-frame-options': 'DENY' },
      '/docs/': { ...none, 'x-xss-protection': '1' },
      '/missing.html': { ...none, 'x-frame-options': 'DENY' },
      '/game.js': { ...none, 'content-security-policy': "default-src 'self'" },
    })
  })

  test('more than 10 routes: the CDN serves 10 of them, never simply the first 10 given', async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const shuffled = await startEmulator({ rateLimit: false, publishDelayMs: 0, routeOrderSeed: seed })
      try {
        const files = Object.fromEntries(
          Array.from({ length: 12 }, (_, i) => [`r${i}.txt`, { body: `r${i}`, type: 'text/plain' }]),
        )
        const siteId = await site(shuffled, files)
        const routes = Array.from({ length: 12 }, (_, i) => headerRoute(`r${i}.txt`, 0, ['x-route', `${i}`]))
        const created = await call<{ version_id: string }>(
          shuffled,
          'POST',
          `/cloud/games/${GAME}/versions`,
          {
            display_name: 'many routes',
            config: { cdn: { site_id: siteId, routes }, matchmaker: await liveMatchmaker(shuffled) },
          },
        )
        assert.equal(created.status, 200, JSON.stringify(created.body))
        const namespaceId = await createNamespace('routes', shuffled)
        assert.equal((await publish(namespaceId, created.body.version_id, shuffled)).status, 200)
        const host = shuffled.namespaceHost(GAME, namespaceId)
        const served: number[] = []
        for (let i = 0; i < 12; i++) {
          if ((await getWithHost(shuffled, host, `/r${i}.txt`)).headers['x-route'] === `${i}`) served.push(i)
        }
        assert.equal(served.length, 10, `seed ${seed}: ${served.join(',')}`)
        assert.ok(
          served.some((i) => i >= 10),
          `seed ${seed}: a route given after the 10th is served`,
        )
        // Read back, the version answers them in the order the CDN reads them.
        const read = await readVersion(shuffled, created.body.version_id)
        const order = read.config.cdn!.routes!.map((route) => Number(route.glob.slice(1, -4)))
        assert.deepEqual(
          [...order.slice(0, 10)].sort((a, b) => a - b),
          served,
        )
      } finally {
        await shuffled.close()
      }
    }
  })

  test('a custom_headers middleware without headers fails the creation with 500 ERROR, the name taken', async () => {
    const siteId = await site(emulator, { 'index.html': { body: 'x', type: 'text/html' } })
    const config = {
      cdn: {
        site_id: siteId,
        routes: [
          headerRoute('**', 0, ['x-a', 'a']),
          { glob: '*.html', priority: 1, middlewares: [{ kind: { custom_headers: { headers: [] } } }] },
        ],
      },
      matchmaker: await liveMatchmaker(emulator),
    }
    const validate = await call<{ errors: unknown[] }>(
      emulator,
      'POST',
      `/cloud/games/${GAME}/versions/validate`,
      {
        display_name: 'empty headers',
        config,
      },
    )
    assert.deepEqual(validate.body.errors, [], 'validation lets it through')
    const path = `/cloud/games/${GAME}/versions`
    assertInternal(await call(emulator, 'POST', path, { display_name: 'empty headers', config }))
    const again = await call(emulator, 'POST', path, { display_name: 'empty headers', config })
    assert.match(assertError(again, 400, 'VALIDATION_ERROR').message, /display-name\.not-unique/)
  })

  test('GET /cloud/bootstrap: the bare CDN domain, as the service answers it, or none', async () => {
    const answer = await call<{ domains: Record<string, string>; cluster: string; captcha: object }>(
      emulator,
      'GET',
      '/cloud/bootstrap',
    )
    assert.equal(answer.status, 200)
    assert.equal(answer.body.domains.cdn, 'localhost')
    assert.deepEqual([answer.body.cluster, answer.body.captcha], ['oss', {}])
    const anonymous = await fetch(`${emulator.url}/cloud/bootstrap`)
    assert.equal(anonymous.status, 401)
    await anonymous.body?.cancel()
    const without = await startEmulator({ rateLimit: false, bootstrapCdnDomain: null })
    try {
      const bare = await call<{ domains: Record<string, string> }>(without, 'GET', '/cloud/bootstrap')
      assert.equal('cdn' in bare.body.domains, false, 'a self-hosted service without DNS')
    } finally {
      await without.close()
    }
  })
})
