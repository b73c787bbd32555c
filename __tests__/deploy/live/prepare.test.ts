// Going live as the service needs: a missing namespace is created on the version the deploy builds on
// (what prod serves, else the game's latest), then the new version is published to it like to any
// other namespace, so its history holds every deploy and `previous` works from the second on.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ServiceClient } from '../../../src/api/client.ts'
import { createAgent } from '../../../src/api/http.ts'
import { memoryLogger } from '../../../src/common/logger.ts'
import { deploy } from '../../../src/deploy/pipeline.ts'
import { validateDeployVersion } from '../../../src/deploy/live/version-config.ts'
import { DEFAULT_SEED, startEmulator, type Emulator } from '../../../src/emulator/index.ts'
import { readInputs } from '../../../src/inputs/deploy.ts'
import { getter, siteFiles, tempDir, writeTree } from '../../support/helpers.ts'
import { virtualTime } from '../../support/virtual-time.ts'

const GAME = DEFAULT_SEED.games[0]!.id
const OLDER = '5a0e7c2d-4b9f-4e1a-8d36-2c7f1b9e4a08'
const LATEST = '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53'
const fast = { sleep: async () => {} }

/** The default seed (its game has prod and staging, as a new game of the service), prod serving the older version. */
function seedWithProd() {
  const seed = structuredClone(DEFAULT_SEED)
  seed.games[0]!.namespaces!.find((n) => n.nameId === 'prod')!.versionId = OLDER
  return seed
}

/** The default seed, its game without a prod namespace. */
function seedWithoutProd() {
  const seed = structuredClone(DEFAULT_SEED)
  const game = seed.games[0]!
  game.namespaces = game.namespaces!.filter((n) => n.nameId !== 'prod')
  game.lobbies = []
  return seed
}

describe('going live on a new namespace', () => {
  let emulator: Emulator
  let site: string
  let temp: string
  const agent = createAgent()
  // The publish delay is the service's, on virtual time that the deploy's checks of its url move.
  const time = virtualTime()
  before(async () => {
    emulator = await startEmulator({ rateLimit: false, seed: seedWithProd(), timer: time.timer })
    site = await tempDir()
    await writeTree(site, siteFiles(5))
    temp = await tempDir()
  })
  after(async () => {
    await emulator.close()
    await agent.close()
  })

  const run = (values: Record<string, string>, logger = memoryLogger()) =>
    deploy(
      readInputs(
        getter({ 'api-url': emulator.url, token: 'gamehost-demo-token', 'game-id': GAME, ...values }),
        { repository: 'studio/space-game', ref: 'refs/pull/7/merge', sha: 'abcdef0123456789' },
      ),
      { logger, tempDir: temp, retry: fast, sleep: time.sleep, clock: time.clock },
    )

  test('is created on what prod serves, then published to: its history holds each deploy', async () => {
    const client = new ServiceClient({
      baseUrl: emulator.url,
      token: 'gamehost-demo-token',
      logger: memoryLogger(),
      dispatcher: agent,
    })
    const logger = memoryLogger()
    const first = await run({ path: site, namespace: 'pr-7' }, logger)
    const namespace = emulator.namespaces(GAME).find((n) => n.nameId === 'pr-7')!
    assert.ok(namespace)
    assert.ok(
      logger.lines.some((l) => l.includes(`created on version ${OLDER} ('0.9.0', what prod serves`)),
      logger.lines.join('\n'),
    )
    assert.ok(
      logger.lines.some((l) =>
        l.includes(`Created namespace pr-7 (${namespace.namespaceId}) on version ${OLDER}`),
      ),
    )
    // The new version copies what prod serves, not the game's latest version.
    const older = (await client.getVersion(GAME, OLDER)).version
    const made = (await client.getVersion(GAME, first.published!.versionId)).version
    assert.deepEqual(made.config.matchmaker, older.config.matchmaker)
    assert.equal(namespace.versionId, first.published!.versionId)
    // Published with the version route: recorded, unlike a namespace created on the new version.
    assert.deepEqual(
      emulator.versionHistory(GAME, namespace.namespaceId).map((h) => h.versionId),
      [first.published!.versionId],
    )
    assert.equal(first.provisioned.namespaceCreated, true)
    assert.equal(first.published!.replacedVersionId, undefined)

    const second = await run({ path: site, namespace: 'pr-7', 'skip-unchanged': 'false' })
    assert.equal(second.provisioned.namespaceCreated, false)
    assert.equal(second.published!.replacedVersionId, first.published!.versionId)
    // `previous` (the newest before the current, in the service's newest-first history) is the first deploy's.
    const { versions } = await client.getNamespaceVersionHistory(GAME, namespace.namespaceId)
    assert.deepEqual(
      versions.map((h) => h.version_id),
      [second.published!.versionId, first.published!.versionId],
    )
  })

  test('version-id still decides the base of a new namespace', async () => {
    const logger = memoryLogger()
    const result = await run({ path: site, namespace: 'pr-8', 'version-id': LATEST }, logger)
    const namespace = emulator.namespaces(GAME).find((n) => n.nameId === 'pr-8')!
    assert.ok(
      logger.lines.some((l) =>
        l.includes(`Created namespace pr-8 (${namespace.namespaceId}) on version ${LATEST}`),
      ),
    )
    assert.deepEqual(
      emulator.versionHistory(GAME, namespace.namespaceId).map((h) => h.versionId),
      [result.published!.versionId],
    )
  })
})

describe('going live on a new namespace of a game without prod', () => {
  test("builds on the game's latest version, and says so", async () => {
    const time = virtualTime()
    const emulator = await startEmulator({ rateLimit: false, seed: seedWithoutProd(), timer: time.timer })
    try {
      const site = await tempDir()
      await writeTree(site, siteFiles(3))
      const logger = memoryLogger()
      await deploy(
        readInputs(
          getter({
            'api-url': emulator.url,
            token: 'gamehost-demo-token',
            'game-id': GAME,
            path: site,
            namespace: 'pr-9',
          }),
        ),
        {
          logger,
          tempDir: await tempDir(),
          retry: fast,
          sleep: time.sleep,
          clock: time.clock,
        },
      )
      assert.ok(
        logger.lines.some((l) =>
          l.includes(
            `created on version ${LATEST} ('1.0.0', the game's latest: no version-id was given and it has no prod namespace)`,
          ),
        ),
        logger.lines.join('\n'),
      )
    } finally {
      await emulator.close()
    }
  })

  test('a version name another run took after it was chosen does not fail the validation (createVersion reserves another)', async () => {
    // Two first runs of one preview at once chose the same name: the second's validation answered
    // display-name.not-unique, and the deploy failed.
    const emulator = await startEmulator({ rateLimit: false })
    try {
      const client = new ServiceClient({
        baseUrl: emulator.url,
        token: 'gamehost-demo-token',
        logger: memoryLogger(),
        dispatcher: createAgent(),
      })
      const base = (await client.getVersion(GAME, LATEST)).version.config
      await validateDeployVersion(client, GAME, '1.0.0', base)
      await assert.rejects(
        validateDeployVersion(client, GAME, 'two  spaces', base),
        /The new version is invalid/,
        'other errors still fail',
      )
    } finally {
      await emulator.close()
    }
  })
})
