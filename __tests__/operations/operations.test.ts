// The operations behind the new actions and the CLI, in process: paging, inputs, verdicts, reports.
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import type { ServiceClient } from '../../src/api/client.ts'
import { UsageError, ValidationFailedError } from '../../src/api/errors.ts'
import type { ListServersQuery, LobbySummary, Server } from '../../src/api/types.ts'
import { DEFAULT_SEED, type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { lobbyOperation, lobbyState } from '../../src/operations/lobby.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { runOperation } from '../../src/operations/operation.ts'
import { openRun } from '../../src/api/run.ts'
import type { Connection } from '../../src/inputs/common.ts'
import type { RetryPolicy } from '../../src/common/retry.ts'
import type { Logger } from '../../src/common/logger.ts'
import { renderText } from '../../src/common/report.ts'
import { listAllServers, readTags, serversOperation } from '../../src/operations/servers.ts'
import { validateOperation } from '../../src/operations/validate.ts'
import { getter } from '../support/helpers.ts'
import { GAME, NAMESPACE, TOKEN, stagingSeed } from '../support/actions.ts'

const fast = { sleep: async () => {} }

/** A client of a Run opened for `fn` and closed after it. */
async function withClient<T>(
  connection: Connection,
  options: { logger: Logger; retry?: Partial<RetryPolicy> },
  fn: (client: ServiceClient) => Promise<T>,
): Promise<T> {
  const run = openRun({ connection, ...options })
  try {
    return await fn(run.client)
  } finally {
    await run.dispose()
  }
}

describe('listAllServers against the emulator', () => {
  const { seed, servers } = stagingSeed(7)
  let emulator: Emulator
  before(async () => {
    emulator = await startTestEmulator({ seed, serversPageSize: 1, rateLimit: false })
  })
  after(() => emulator.close())

  const list = (options: { includeDestroyed: boolean; limit?: number; tags?: Record<string, string> }) =>
    withClient(
      { apiUrl: emulator.url, token: TOKEN, gameId: GAME },
      { logger: memoryLogger(), retry: fast },
      (client) =>
        listAllServers(
          client,
          {
            gameId: GAME,
            environmentId: '7a2e5c8f-1b4d-4e9a-a3c6-8d1f4b7e0c92',
            tags: undefined,
            limit: undefined,
            ...options,
          },
          memoryLogger(),
        ),
    )

  test('pages of one server: one request per server and an empty page to end', async () => {
    const result = await list({ includeDestroyed: true })
    assert.deepEqual(result.servers, servers)
    assert.equal(result.pages, 8)
    assert.equal(result.limited, false)
  })

  test('a limit of the exact number of matching servers still says the limit was reached', async () => {
    const result = await list({ includeDestroyed: true, limit: 2 })
    assert.deepEqual(
      result.servers.map((s) => s.id),
      servers.slice(0, 2).map((s) => s.id),
    )
    assert.equal(result.pages, 2)
    assert.equal(result.limited, true)
  })
})

describe('listAllServers paging rules', () => {
  const ENVIRONMENT = {
    gameId: GAME,
    environmentId: '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15',
    tags: undefined,
    limit: undefined,
  }
  const server = (id: string) => ({ id }) as Server
  /** A client answering pages from a script, recording the cursors asked for. */
  const scripted = (pages: string[][]) => {
    const cursors: Array<string | undefined> = []
    const client = {
      listServers: (_game: string, _environment: string, query: ListServersQuery = {}) => {
        cursors.push(query.cursor)
        return Promise.resolve({ servers: (pages[cursors.length - 1] ?? []).map(server) })
      },
    } as unknown as ServiceClient
    return { client, cursors }
  }

  test('the cursor is the last id received; a shorter page ends the list', async () => {
    const { client, cursors } = scripted([['a', 'b', 'c'], ['d', 'e', 'f'], ['g']])
    const logger = memoryLogger()
    const result = await listAllServers(client, { ...ENVIRONMENT, includeDestroyed: true }, logger)
    assert.deepEqual(
      result.servers.map((s) => s.id),
      ['a', 'b', 'c', 'd', 'e', 'f', 'g'],
    )
    assert.deepEqual(cursors, [undefined, 'c', 'f'])
    assert.deepEqual(logger.lines, [
      'Page 1: 3 servers (3 in all)',
      'Page 2: 3 servers (6 in all)',
      'Page 3: 1 server (7 in all)',
    ])
  })

  test('a service that sends a page again cannot make the listing loop', async () => {
    const { client, cursors } = scripted([
      ['a', 'b'],
      ['a', 'b'],
      ['a', 'b'],
    ])
    const logger = memoryLogger()
    const result = await listAllServers(client, { ...ENVIRONMENT, includeDestroyed: false }, logger)
    assert.deepEqual(
      result.servers.map((s) => s.id),
      ['a', 'b'],
    )
    assert.equal(cursors.length, 2)
    assert.match(logger.lines.join('\n'), /warning: The service sent 2 servers again on page 2/)
  })
})

describe('inputs of the operations', () => {
  const connection = { 'api-url': 'http://127.0.0.1:1', token: 't', 'game-id': GAME }

  test('tags: a JSON object of strings; {} is no filter', () => {
    assert.deepEqual(readTags(' {"region": "eu", "mode": "ranked"} '), { region: 'eu', mode: 'ranked' })
    assert.equal(readTags(''), undefined)
    assert.equal(readTags('{}'), undefined)
    assert.throws(() => readTags('{"k": null}'), /tags '.*': the value of tag "k" is not a string/)
    assert.throws(() => readTags(`{"${'k'.repeat(33)}": "v"}`), /tag keys must be 1 to 32 bytes/)
  })

  test('servers inputs', () => {
    const inputs = serversOperation.read(
      getter({ ...connection, 'environment-id': '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15', limit: '10' }),
    )
    assert.deepEqual(inputs, {
      apiUrl: 'http://127.0.0.1:1',
      token: 't',
      gameId: GAME,
      environmentId: '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15',
      tags: undefined,
      includeDestroyed: false,
      limit: 10,
    })
  })

  test('the CLI says how to give the token', () => {
    const missingToken = () => new UsageError('no token: set GAMEHOST_TOKEN')
    assert.throws(
      () =>
        serversOperation.read(getter({ ...connection, token: '', 'environment-id': 'p' }), { missingToken }),
      /^UsageError: no token: set GAMEHOST_TOKEN$/,
    )
  })

  test('validate: a group name alone, or a matchmaker config with its namespace', () => {
    assert.deepEqual(
      validateOperation.read(getter({ ...connection, 'group-display-name': 'Owls' })).matchmaker,
      undefined,
    )
    assert.deepEqual(
      validateOperation.read(
        getter({
          ...connection,
          'namespace-id': NAMESPACE,
          'lobby-count-max': '0',
          'max-players': '2147483647',
        }),
      ).matchmaker,
      { namespaceId: NAMESPACE, lobbyCountMax: 0, maxPlayers: 2147483647 },
    )
  })

  test('every id input is checked as a UUID, naming the input', () => {
    assert.throws(
      () =>
        serversOperation.read(getter({ ...connection, 'game-id': 'demo-game', 'environment-id': NAMESPACE })),
      /^UsageError: game-id 'demo-game' is not an id of the service/,
    )
    assert.throws(
      () => serversOperation.read(getter({ ...connection, 'environment-id': 'staging' })),
      /^UsageError: environment-id 'staging' is not an id of the service/,
    )
    assert.throws(
      () => lobbyOperation.read(getter({ ...connection, 'namespace-id': NAMESPACE, 'lobby-id': 'lobby-1' })),
      /^UsageError: lobby-id 'lobby-1' is not an id of the service/,
    )
    assert.throws(
      () =>
        lobbyOperation.read(getter({ ...connection, 'namespace-id': 'production', 'lobby-id': NAMESPACE })),
      /^UsageError: namespace-id 'production' is not an id of the service/,
    )
    assert.throws(
      () =>
        validateOperation.read(
          getter({ ...connection, 'namespace-id': 'production', 'lobby-count-max': '1', 'max-players': '1' }),
        ),
      /^UsageError: namespace-id 'production' is not an id of the service/,
    )
  })
})

describe('lobby verdicts', () => {
  const stopped = (failed: boolean, exitCode: number): LobbySummary => ({
    ...DEFAULT_SEED.games[0]!.lobbies![0]!,
    status: { running: {}, stopped: { exit_code: exitCode, failed, stop_ts: '2025-05-06T21:00:00Z' } },
  })
  const inputs = {
    apiUrl: '',
    token: '',
    gameId: GAME,
    namespaceId: NAMESPACE,
    lobbyId: 'l',
    failIfFailed: true,
  }

  test('a lobby that stopped without failing passes, with its exit code', () => {
    const lobby = stopped(false, 0)
    const result = { lobby, ...lobbyState(lobby) }
    assert.deepEqual(lobbyState(lobby), { status: 'stopped', exitCode: 0, failed: false })
    assert.equal(lobbyOperation.failure?.(result, inputs), undefined)
    assert.match(
      renderText(lobbyOperation.report(result, inputs)),
      /Status +stopped, not failed, exit code 0/,
    )
  })

  test('a failed one fails unless fail-if-failed is false', () => {
    const lobby = stopped(true, 1)
    const result = { lobby, ...lobbyState(lobby) }
    assert.match(
      lobbyOperation.failure?.(result, inputs)?.message ?? '',
      /stopped with exit code 1 at 2025-05-06T21:00:00Z/,
    )
    assert.equal(lobbyOperation.failure?.(result, { ...inputs, failIfFailed: false }), undefined)
  })
})

describe('validate verdicts', () => {
  test('one problem per error, titled for an annotation', () => {
    const failure = validateOperation.failure?.(
      {
        matchmaker: undefined,
        groupDisplayName: 'A  B',
        errors: [{ path: ['display-name-invalid'], validation: 'group-display-name', message: 'bad spaces' }],
      },
      {
        apiUrl: '',
        token: '',
        gameId: '',
        matchmaker: undefined,
        groupDisplayName: 'A  B',
        failOnError: true,
      },
    )
    assert.ok(failure instanceof ValidationFailedError)
    assert.deepEqual(failure.problems, [
      { path: ['display-name-invalid'], description: 'bad spaces', title: 'group-display-name invalid' },
    ])
    assert.equal(
      failure.message,
      "The service finds the group display name 'A  B' invalid: display-name-invalid (bad spaces)",
    )
  })
})

describe('lobby-logs reads metrics where the real service puts them', () => {
  // A service of our own that answers the real shape only: metrics beside the lobby, none inside.
  const { metrics, ...withoutMetrics } = DEFAULT_SEED.games[0]!.lobbies![0]!
  const server = createServer((_request, response) => {
    const body = JSON.stringify({
      lobby: withoutMetrics,
      metrics,
      perf_lists: [],
      stdout_presigned_urls: [],
      stderr_presigned_urls: [],
    })
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
    response.end(body)
  })
  before(() => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)))
  after(() => new Promise<void>((resolve) => server.close(() => resolve())))

  test('metrics beside the lobby reach the result', async () => {
    const { port } = server.address() as AddressInfo
    const result = await runOperation(
      lobbyOperation,
      {
        apiUrl: `http://127.0.0.1:${port}`,
        token: TOKEN,
        gameId: GAME,
        namespaceId: NAMESPACE,
        lobbyId: withoutMetrics.lobby_id,
        failIfFailed: true,
      },
      { logger: memoryLogger() },
    )
    assert.deepEqual(result.lobby.metrics, metrics)
  })
})
