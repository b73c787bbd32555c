// The servers, lobby-logs, avatars and validate actions, each run through its committed bundle
// (dist/<name>/index.js) the way the GitHub runner runs it, against the emulator.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { CustomAvatarSummary, LobbySummary, Server } from '../../src/api/types.ts'
import { DEFAULT_SEED, type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import {
  CRASHED_LOBBY,
  GAME,
  NAMESPACE,
  RUNNING_LOBBY,
  TOKEN,
  commands,
  runNewAction,
  stagingSeed,
} from '../support/actions.ts'

const PAGE = 3
const { seed, servers: staging } = stagingSeed(16)

describe('new actions through their bundles', () => {
  let emulator: Emulator
  before(async () => {
    emulator = await startTestEmulator({ seed, serversPageSize: PAGE, rateLimit: false })
  })
  after(() => emulator.close())

  const connection = () => ({ 'api-url': emulator.url, token: TOKEN, 'game-id': GAME })
  const serverRequests = () =>
    emulator.requests.filter(
      (r) => r.path === `/games/${GAME}/environments/7a2e5c8f-1b4d-4e9a-a3c6-8d1f4b7e0c92/servers`,
    ).length
  const ids = (servers: Server[]) => servers.map((s) => s.id)

  describe('servers', () => {
    test('every matching server across several pages, tag filter applied, destroyed ones included', async () => {
      const before = serverRequests()
      const run = await runNewAction('servers', {
        ...connection(),
        'environment-id': '7a2e5c8f-1b4d-4e9a-a3c6-8d1f4b7e0c92',
        tags: '{"region": "eu"}',
        'include-destroyed': 'true',
      })
      assert.equal(run.exitCode, 0, run.stdout)
      const expected = staging.filter((s) => s.tags.region === 'eu')
      assert.equal(expected.length, 8)
      const listed = JSON.parse(run.outputs.servers!) as Server[]
      assert.deepEqual(ids(listed), ids(expected), 'all of them, newest first, none twice')
      assert.deepEqual(listed, expected, 'as the service describes them')
      assert.equal(run.outputs.count, '8')
      assert.ok(listed.some((s) => s.destroyed_at !== undefined))
      // Pages of 3: 3, 3, 2 (a short page ends it).
      assert.equal(serverRequests() - before, 3)
      assert.match(run.stdout, /^Page 3: 2 servers \(8 in all\)$/m)
      assert.match(
        run.stdout,
        /::group::List the servers of 7a2e5c8f-1b4d-4e9a-a3c6-8d1f4b7e0c92 with tags region=eu \(destroyed ones included\)/,
      )
      assert.match(run.summary, /<h2>gamehost servers: 7a2e5c8f-1b4d-4e9a-a3c6-8d1f4b7e0c92<\/h2>/)
      for (const server of expected) assert.ok(run.summary.includes(`<code>${server.id}</code>`), server.id)
      assert.ok(!run.summary.includes(staging[1]!.id), 'no server of another region')
    })

    test('without destroyed servers, and with two tags', async () => {
      const run = await runNewAction('servers', {
        ...connection(),
        'environment-id': '7a2e5c8f-1b4d-4e9a-a3c6-8d1f4b7e0c92',
        tags: '{"region":"us","pool":"a"}',
      })
      assert.equal(run.exitCode, 0, run.stdout)
      const expected = staging.filter(
        (s) => s.tags.region === 'us' && s.tags.pool === 'a' && s.destroyed_at === undefined,
      )
      assert.ok(expected.length >= 2)
      assert.deepEqual(ids(JSON.parse(run.outputs.servers!) as Server[]), ids(expected))
      assert.equal(run.outputs.count, String(expected.length))
    })

    test('every server when a page is exactly full, and the limit stops early', async () => {
      const all = await runNewAction('servers', {
        ...connection(),
        'environment-id': '7a2e5c8f-1b4d-4e9a-a3c6-8d1f4b7e0c92',
        'include-destroyed': 'true',
        tags: '{"pool":"a"}',
      })
      assert.equal(all.exitCode, 0, all.stdout)
      const pool = staging.filter((s) => s.tags.pool === 'a')
      assert.equal(pool.length % PAGE, 0, 'the last page is full: only an empty page ends the list')
      assert.deepEqual(ids(JSON.parse(all.outputs.servers!) as Server[]), ids(pool))

      const before = serverRequests()
      const limited = await runNewAction('servers', {
        ...connection(),
        'environment-id': '7a2e5c8f-1b4d-4e9a-a3c6-8d1f4b7e0c92',
        'include-destroyed': 'true',
        limit: '4',
      })
      assert.equal(limited.exitCode, 0, limited.stdout)
      assert.deepEqual(ids(JSON.parse(limited.outputs.servers!) as Server[]), ids(staging.slice(0, 4)))
      assert.equal(limited.outputs.count, '4')
      assert.equal(serverRequests() - before, 2, 'two pages of 3 hold the first 4')
      assert.match(limited.stdout, /^4 servers \(the first 4: limit reached\)$/m)
    })

    test('the demo environment: running servers only by default', async () => {
      const run = await runNewAction('servers', {
        ...connection(),
        'environment-id': '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15',
      })
      assert.equal(run.exitCode, 0, run.stdout)
      const prod = DEFAULT_SEED.games[0]!.environments![0]!.servers
      assert.deepEqual(
        (JSON.parse(run.outputs.servers!) as Server[]).map((s) => s.id).sort(),
        prod
          .filter((s) => s.destroyed_at === undefined)
          .map((s) => s.id)
          .sort(),
      )
    })

    test('an unknown environment fails with the service error and a hint', async () => {
      const run = await runNewAction('servers', {
        ...connection(),
        'environment-id': '00000000-0000-4000-8000-000000000000',
      })
      assert.equal(run.exitCode, 1)
      const errors = commands(run, 'error')
      assert.equal(errors.length, 1, run.stdout)
      assert.match(errors[0]!, /^::error::servers\.list failed: 500 ERROR: .*check environment-id/)
    })
  })

  describe('lobby-logs', () => {
    test('a lobby that crashed fails the step with its exit code, after setting every output', async () => {
      const run = await runNewAction('lobby-logs', {
        ...connection(),
        'namespace-id': NAMESPACE,
        'lobby-id': CRASHED_LOBBY.lobby_id,
      })
      assert.equal(run.exitCode, 1)
      const errors = commands(run, 'error')
      assert.equal(errors.length, 1, run.stdout)
      assert.match(
        errors[0]!,
        /^::error::Lobby 8e5f2b3c-.* \(ranked-duo in us-nyc\) failed: it stopped with exit code 137/,
      )
      assert.equal(run.outputs.status, 'stopped')
      assert.equal(run.outputs['exit-code'], '137')
      assert.equal(run.outputs.failed, 'true')
      assert.deepEqual(JSON.parse(run.outputs.lobby!) as LobbySummary, CRASHED_LOBBY)
      assert.match(run.summary, /<h2>gamehost lobby ranked-duo: failed<\/h2>/)
      assert.match(run.summary, /stopped, failed, exit code 137/)
      assert.match(run.summary, /Metrics of job job-8e5f2b3c/)
    })

    test('a running lobby passes', async () => {
      const run = await runNewAction('lobby-logs', {
        ...connection(),
        'namespace-id': NAMESPACE,
        'lobby-id': RUNNING_LOBBY.lobby_id,
      })
      assert.equal(run.exitCode, 0, run.stdout)
      assert.deepEqual(commands(run, 'error'), [])
      assert.equal(run.outputs.status, 'running')
      assert.equal(run.outputs['exit-code'], '')
      assert.equal(run.outputs.failed, 'false')
      assert.deepEqual(JSON.parse(run.outputs.lobby!) as LobbySummary, RUNNING_LOBBY)
      assert.match(run.summary, /<td>Status<\/td><td>running<\/td>/)
      assert.match(
        run.summary,
        /<td>Memory \(MB of 1024 allocated\)<\/td><td>4<\/td><td>239\.4<\/td><td>241\.8<\/td>/,
      )
    })

    test('fail-if-failed: false passes a crashed lobby with a warning', async () => {
      const run = await runNewAction('lobby-logs', {
        ...connection(),
        'namespace-id': NAMESPACE,
        'lobby-id': CRASHED_LOBBY.lobby_id,
        'fail-if-failed': 'false',
      })
      assert.equal(run.exitCode, 0, run.stdout)
      assert.equal(run.outputs.failed, 'true')
      const warnings = commands(run, 'warning')
      assert.equal(warnings.length, 1)
      assert.match(warnings[0]!, /^::warning title=Lobby failed::.*exit code 137.*fail-if-failed is false/)
    })

    test('an unknown lobby says which inputs to check', async () => {
      const run = await runNewAction('lobby-logs', {
        ...connection(),
        'namespace-id': NAMESPACE,
        'lobby-id': '00000000-0000-4000-8000-000000000000',
      })
      assert.equal(run.exitCode, 1)
      assert.match(commands(run, 'error')[0]!, /500 ERROR.*check namespace-id and lobby-id/)
    })
  })

  describe('avatars', () => {
    test('lists every custom avatar with the counts', async () => {
      const run = await runNewAction('avatars', connection())
      assert.equal(run.exitCode, 0, run.stdout)
      // Newest first, as the service lists them.
      const avatars = DEFAULT_SEED.games[0]!.avatars!.toSorted((a, b) =>
        b.create_ts.localeCompare(a.create_ts),
      )
      assert.deepEqual(JSON.parse(run.outputs['custom-avatars']!) as CustomAvatarSummary[], avatars)
      assert.equal(run.outputs.count, '3')
      assert.equal(run.outputs['complete-count'], '2')
      assert.match(run.summary, /<h2>gamehost avatars: 3 \(2 complete\)<\/h2>/)
      for (const avatar of avatars) assert.ok(run.summary.includes(avatar.display_name))
      assert.match(run.summary, /no \(uploading\)/)
    })

    test('a token of another game is refused', async () => {
      const run = await runNewAction('avatars', { ...connection(), token: 'gamehost-other-token' })
      assert.equal(run.exitCode, 1)
      assert.match(commands(run, 'error')[0]!, /listGameCustomAvatars failed: 403 API_FORBIDDEN/)
      assert.ok(run.stdout.includes('::add-mask::gamehost-other-token'))
    })
  })

  describe('validate', () => {
    test('fails with one annotation per error of the service, and its paths in the output', async () => {
      const run = await runNewAction('validate', {
        ...connection(),
        'namespace-id': NAMESPACE,
        'lobby-count-max': '40000',
        'max-players': '0',
        'group-display-name': 'Taken Group',
      })
      assert.equal(run.exitCode, 1)
      const errors = commands(run, 'error')
      const kinds = ['client', 'vpn', 'proxy', 'tor', 'hosting']
      assert.deepEqual(errors.slice(0, 8), [
        '::error title=lobby-count too high::lobby_count_max must be below 32768',
        '::error title=max-players too low::max_players must be at least 1',
        ...kinds.map(
          (kind) =>
            `::error title=max-players ${kind} too low::max_players must be at least 1 (the limit per ${kind === 'client' ? 'client' : `${kind} client`})`,
        ),
        '::error title=group-display-name not unique::a group with this display name already exists',
      ])
      assert.equal(errors.length, 9)
      assert.match(
        errors[8]!,
        /^::error::The service finds the matchmaker config and the group display name 'Taken Group' invalid: lobby-count\.too-high/,
      )
      assert.equal(run.outputs.valid, 'false')
      const reported = JSON.parse(run.outputs.errors!) as Array<{ path: string[]; validation: string }>
      assert.deepEqual(
        reported.map((e) => [e.validation, e.path]),
        [
          ['matchmaker-config', ['lobby-count', 'too-high']],
          ['matchmaker-config', ['max-players', 'too-low']],
          ...kinds.map((kind) => ['matchmaker-config', ['max-players', kind, 'too-low']]),
          ['group-display-name', ['not-unique']],
        ],
      )
      assert.match(run.summary, /<h2>gamehost validate: 8 errors<\/h2>/)
      assert.match(run.summary, /<code>lobby-count\.too-high<\/code>/)
    })

    test('a group name the service finds too long', async () => {
      const run = await runNewAction('validate', {
        ...connection(),
        'group-display-name': 'A name much too long for a group',
      })
      assert.equal(run.exitCode, 1)
      // A pair: the service's display-name check has the length in it.
      assert.deepEqual(JSON.parse(run.outputs.errors!), [
        {
          path: ['too-long'],
          validation: 'group-display-name',
          message: 'the group display name must be at most 24 bytes',
        },
        {
          path: ['display-name-invalid'],
          validation: 'group-display-name',
          message:
            'the group display name may contain only single spaces as whitespace, never leading, trailing or doubled',
        },
      ])
      assert.equal(
        commands(run, 'error')[0],
        '::error title=group-display-name too long::the group display name must be at most 24 bytes',
      )
    })

    test('a valid config and group name pass', async () => {
      const run = await runNewAction('validate', {
        ...connection(),
        'namespace-id': NAMESPACE,
        'lobby-count-max': '64',
        'max-players': '16',
        'group-display-name': 'Night Owls',
      })
      assert.equal(run.exitCode, 0, run.stdout)
      assert.deepEqual(commands(run, 'error'), [])
      assert.equal(run.outputs.valid, 'true')
      assert.equal(run.outputs.errors, '[]')
      assert.match(run.summary, /<h2>gamehost validate: valid<\/h2>/)
    })

    test('fail-on-error: false reports the errors as warnings and passes', async () => {
      const run = await runNewAction('validate', {
        ...connection(),
        'namespace-id': NAMESPACE,
        'lobby-count-max': '0',
        'max-players': '8',
        'fail-on-error': 'false',
      })
      assert.equal(run.exitCode, 0, run.stdout)
      assert.equal(run.outputs.valid, 'false')
      assert.deepEqual(commands(run, 'warning'), [
        '::warning title=lobby-count too low::lobby_count_max must be at least 1',
      ])
    })

    test('an unknown namespace says to check namespace-id', async () => {
      const run = await runNewAction('validate', {
        ...connection(),
        'namespace-id': '00000000-0000-4000-8000-000000000000',
        'lobby-count-max': '8',
        'max-players': '8',
      })
      assert.equal(run.exitCode, 1)
      assert.match(commands(run, 'error')[0]!, /500 ERROR.*check namespace-id/)
    })
  })

  test('the token is registered as a secret and never printed', async () => {
    const run = await runNewAction('avatars', connection())
    assert.ok(run.stdout.startsWith(`::add-mask::${TOKEN}\n`), run.stdout)
    const unmasked = run.stdout.split('\n').filter((l) => l.includes(TOKEN) && !l.startsWith('::add-mask::'))
    assert.deepEqual(unmasked, [])
  })
})
