// Provisioning through the service: get-or-create by name_id, the domain added only when missing,
// and the races of two runs, made deterministic by a client that lets "the other run" act between
// this run's read and its write.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ServiceClient } from '../../../src/api/client.ts'
import { createAgent } from '../../../src/api/http.ts'
import { UsageError } from '../../../src/api/errors.ts'
import { retryPolicy } from '../../../src/common/retry.ts'
import type { GetGameResponse, GetNamespaceResponse } from '../../../src/api/types.ts'
import { DEFAULT_SEED, type Emulator } from '../../../src/emulator/index.ts'
import { startTestEmulator } from '../../support/emulator.ts'
import { hasTarget, readInputs, type TargetedInputs } from '../../../src/inputs/deploy.ts'
import { memoryLogger } from '../../../src/common/logger.ts'
import { provision } from '../../../src/deploy/target/provision.ts'
import { getter } from '../../support/helpers.ts'

const GAME = DEFAULT_SEED.games[0]!.id
const VERSION = '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53'
const agent = createAgent()
after(() => agent.close())

/** A client whose reads run `afterRead` once, right after the answer: another run acting meanwhile. */
class RacedClient extends ServiceClient {
  afterGameRead: (() => Promise<void>) | undefined
  afterNamespaceRead: (() => Promise<void>) | undefined

  override async getGame(gameId: string): Promise<GetGameResponse> {
    const answer = await super.getGame(gameId)
    const other = this.afterGameRead
    this.afterGameRead = undefined
    await other?.()
    return answer
  }

  override async getNamespace(gameId: string, namespaceId: string): Promise<GetNamespaceResponse> {
    const answer = await super.getNamespace(gameId, namespaceId)
    const other = this.afterNamespaceRead
    this.afterNamespaceRead = undefined
    await other?.()
    return answer
  }
}

describe('provisioning through the service', () => {
  let emulator: Emulator
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false })
  })
  after(() => emulator.close())

  const options = (logger = memoryLogger()) => ({
    baseUrl: emulator.url,
    token: 'gamehost-demo-token',
    dispatcher: agent,
    logger,
    retry: retryPolicy({ sleep: async () => {} }),
  })
  const inputs = (values: Record<string, string>): TargetedInputs => {
    const read = readInputs(
      getter({ 'api-url': emulator.url, token: 'gamehost-demo-token', 'game-id': GAME, ...values }),
    )
    assert.ok(hasTarget(read))
    return read
  }

  test('a create that loses the race (name-id.not-unique) uses the namespace the other run created', async () => {
    const logger = memoryLogger()
    const client = new RacedClient(options(logger))
    const other = new ServiceClient(options())
    let winner = ''
    client.afterGameRead = async () => {
      winner = (
        await other.createNamespace(GAME, { name_id: 'race-1', display_name: 'race-1', version_id: VERSION })
      ).namespace_id
    }
    const { provisioned: result } = await provision(
      client,
      inputs({ namespace: 'race-1', 'version-id': VERSION }),
      logger,
    )
    assert.equal(result.namespaceId, winner)
    assert.equal(result.namespaceCreated, false)
    assert.equal(emulator.namespaces(GAME).filter((n) => n.nameId === 'race-1').length, 1)
    assert.ok(
      logger.lines.some((l) =>
        l.includes(`Namespace race-1 was created meanwhile by another run: using ${winner}`),
      ),
    )
  })

  test('a domain added by the other run between the read and the add is taken as attached', async () => {
    const logger = memoryLogger()
    const client = new RacedClient(options(logger))
    const other = new ServiceClient(options())
    const { namespace_id: id } = await other.createNamespace(GAME, {
      name_id: 'race-2',
      display_name: 'race-2',
      version_id: VERSION,
    })
    client.afterNamespaceRead = () => other.addNamespaceDomain(GAME, id, 'race-2.example.com')
    const { provisioned: result } = await provision(
      client,
      inputs({ namespace: 'race-2', domain: 'race-2.example.com' }),
      logger,
    )
    assert.equal(result.namespaceId, id)
    assert.deepEqual(emulator.namespaces(GAME).find((n) => n.namespaceId === id)?.domains, [
      'race-2.example.com',
    ])
    assert.ok(
      logger.lines.some(
        (l) => l.includes('was attached to namespace') && l.includes('meanwhile by another run'),
      ),
    )
  })

  test('a domain another namespace holds fails, saying so', async () => {
    const client = new ServiceClient(options())
    const error = await provision(
      client,
      inputs({ namespace: 'taken-domain', domain: 'play.other-game.example' }),
      memoryLogger(),
    ).catch((e: unknown) => e)
    assert.ok(error instanceof UsageError)
    assert.match(error.message, /^domain 'play\.other-game\.example' is held by another namespace/)
    assert.match(error.message, /CLOUD_HOSTNAME_TAKEN/)
  })

  test('namespace-id and namespace must name the same namespace', async () => {
    const client = new ServiceClient(options())
    const production = DEFAULT_SEED.games[0]!.namespaces![0]!.id
    const error = await provision(
      client,
      inputs({ namespace: 'pr-99', 'namespace-id': production }),
      memoryLogger(),
    ).catch((e: unknown) => e)
    assert.ok(error instanceof UsageError)
    assert.match(error.message, /is namespace 'prod', not 'pr-99'/)
    assert.ok(!emulator.namespaces(GAME).some((n) => n.nameId === 'pr-99'))
  })
})
