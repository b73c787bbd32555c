// Promotion and rollback against the emulator: a version id, `previous`, another namespace's version.
import assert from 'node:assert/strict'
import { after, beforeEach, describe, test } from 'node:test'
import { UsageError } from '../../src/api/errors.ts'
import { DEFAULT_SEED, type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { runOperation } from '../../src/operations/operation.ts'
import { openRun } from '../../src/api/run.ts'
import type { Connection } from '../../src/inputs/common.ts'
import type { ServiceClient } from '../../src/api/client.ts'
import type { RetryPolicy } from '../../src/common/retry.ts'
import type { Logger } from '../../src/common/logger.ts'
import { publishOperation, type PublishResult } from '../../src/operations/publish.ts'
import { getter } from '../support/helpers.ts'
import { GAME, NAMESPACE, TOKEN } from '../support/actions.ts'

const fast = { sleep: async () => {} }
// The demo game's 0.9.0 and 1.0.0 (after the default version every game of the service is made with).
const [OLD, CURRENT] = DEFAULT_SEED.games[0]!.versions.slice(-2).map((v) =>
  typeof v === 'string' ? v : v.id,
)

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

describe('the publish operation', () => {
  let emulator: Emulator
  beforeEach(async () => {
    await emulator?.close()
    emulator = await startTestEmulator({ rateLimit: false, cdnDomain: 'localhost' })
  })
  after(() => emulator.close())

  const publish = (inputs: Record<string, string>): Promise<PublishResult> => {
    const read = publishOperation.read(
      getter({
        'api-url': emulator.url,
        token: TOKEN,
        'game-id': GAME,
        'cdn-domain': 'rivet.game',
        // rivet.game is not this machine's: seeing the change live is publish.live.test.ts's.
        verify: 'false',
        ...inputs,
      }),
    )
    return runOperation(publishOperation, read, { logger: memoryLogger(), retry: fast })
  }
  const served = async () => {
    const { game } = await withClient(
      { apiUrl: emulator.url, token: TOKEN, gameId: GAME },
      { logger: memoryLogger() },
      (client) => client.getGame(GAME),
    )
    return Object.fromEntries(game.namespaces.map((ns) => [ns.name_id, ns.version_id]))
  }

  test('a version id: published, the one it replaced reported, the URL under the CDN domain', async () => {
    const result = await publish({ namespace: 'prod', 'version-id': OLD! })
    assert.equal(result.changed, true)
    assert.equal(result.versionId, OLD)
    assert.equal(result.replacedVersionId, CURRENT)
    assert.equal(result.url, 'https://demo-game.rivet.game/')
    assert.equal((await served()).prod, OLD)
    assert.deepEqual(publishOperation.outputs(result), {
      'namespace-id': NAMESPACE,
      'version-id': OLD,
      url: 'https://demo-game.rivet.game/',
      'replaced-version-id': CURRENT,
      digest: null,
      commit: null,
    })
    const again = await publish({ 'namespace-id': NAMESPACE, 'version-id': OLD! })
    assert.equal(again.changed, false, 'publishing what is live changes nothing')
  })

  test("'previous' rolls back to the version published before the current one, from the history", async () => {
    // Creating a namespace records no history: before any publish there is nothing to roll back to.
    await assert.rejects(publish({ namespace: 'prod', 'version-id': 'previous' }), (error: unknown) => {
      assert.ok(error instanceof UsageError)
      assert.match(error.message, /^version-id 'previous': namespace prod has had no other version published/)
      return true
    })
    await publish({ namespace: 'prod', 'version-id': OLD! })
    await publish({ namespace: 'prod', 'version-id': CURRENT! })
    const rolledBack = await publish({ namespace: 'prod', 'version-id': 'previous' })
    assert.equal(rolledBack.versionId, OLD)
    assert.equal(rolledBack.replacedVersionId, CURRENT)
    assert.equal((await served()).prod, OLD)
  })

  test('from-namespace refuses, before any write, a source whose version has no site', async () => {
    // staging, as on a new game of the service, is on the game's first version: it serves no build.
    // Publishing that version to prod made prod answer 404 for the whole verify wait.
    await assert.rejects(publish({ namespace: 'prod', 'from-namespace': 'staging' }), (error: unknown) => {
      assert.ok(error instanceof UsageError)
      assert.match(
        error.message,
        /^from-namespace 'staging' serves version '0\.0\.1' \(\S+\), which has no CDN site: it serves no build, and nothing was published\. Deploy a build to staging first/,
      )
      return true
    })
    assert.equal((await served()).prod, CURRENT)
    const writes = emulator.requests.filter((r) => r.method !== 'GET')
    assert.deepEqual(writes, [], 'nothing was written')
    assert.equal(emulator.versionHistory(GAME, NAMESPACE).length, 0)
  })

  test('expect-digest, expect-commit and from-basic-auth need from-namespace, and a digest of the right form', async () => {
    await assert.rejects(
      async () => publish({ namespace: 'prod', 'version-id': OLD!, 'expect-commit': 'abcdef1' }),
      /expect-digest, expect-commit and from-basic-auth are for a promotion: they need from-namespace/,
    )
    await assert.rejects(
      async () => publish({ namespace: 'prod', 'from-namespace': 'staging', 'expect-digest': 'abc' }),
      /expect-digest must be sha256: and 64 lowercase hex digits/,
    )
    await assert.rejects(
      async () => publish({ namespace: 'prod', 'from-namespace': 'staging', promote: 'site' }),
      /promote 'site' must be one of build, version/,
    )
  })

  test('clear errors before anything changes: an unknown version, namespace or source namespace', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [
        { namespace: 'prod', 'version-id': '00000000-0000-4000-8000-000000000000' },
        /^version-id '0{8}-.*' is not a version of game/,
      ],
      [
        { namespace: 'nope', 'version-id': OLD! },
        /^namespace 'nope' is not a namespace of game .*: it has prod \(.*\), staging \(/,
      ],
      [{ namespace: 'prod', 'from-namespace': 'nope' }, /^from-namespace 'nope' is not a namespace of game/],
    ]
    for (const [inputs, message] of cases) {
      await assert.rejects(
        publish(inputs),
        (error: unknown) => error instanceof UsageError && message.test(error.message),
      )
    }
    assert.equal((await served()).prod, CURRENT)
    assert.equal(emulator.versionHistory(GAME, NAMESPACE).length, 0)
  })
})
