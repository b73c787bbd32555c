// Promotion and rollback see their change live, as the deploy does: against an emulator whose publishes
// reach the edge late (the real service at its worst), "Live at" is said only once the namespace's
// host serves the version, which the test reads from the emulator itself when the line is logged.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { memoryLogger, type Logger } from '../../src/common/logger.ts'
import { deploy } from '../../src/deploy/pipeline.ts'
import type { Emulator } from '../../src/emulator/index.ts'
import { readInputs } from '../../src/inputs/deploy.ts'
import { OperationStoppedError, runOperation } from '../../src/operations/operation.ts'
import { publishOperation } from '../../src/operations/publish.ts'
import { GAME, TOKEN } from '../support/actions.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { getter, tempDir, writeTree } from '../support/helpers.ts'

/** Long enough that a publish which does not wait is caught before the edge serves it. */
const PUBLISH_DELAY_MS = 500

describe('publish sees its change live', () => {
  let emulator: Emulator
  let cdn: string
  const versions: Record<string, string> = {}
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false, publishDelayMs: PUBLISH_DELAY_MS })
    cdn = emulator.url.replace('127.0.0.1', 'localhost')
    const temp = await tempDir()
    for (const [namespace, title] of [
      ['stage-x', 'candidate'],
      ['prod-x', 'v0'],
      ['prod-x', 'v1'],
    ] as const) {
      const path = await tempDir()
      await writeTree(path, { 'index.html': `<title>${title}</title>`, 'game.js': `// ${title}` })
      const inputs = { 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, 'cdn-domain': cdn }
      const result = await deploy(readInputs(getter({ ...inputs, path, namespace })), {
        logger: memoryLogger(),
        tempDir: temp,
      })
      versions[title] = result.published!.versionId
    }
  })
  after(() => emulator.close())

  const live = (nameId: string) => emulator.namespaces(GAME).find((ns) => ns.nameId === nameId)!.liveVersionId

  /** A logger that reads, when "Live at" is logged, which version the emulator's edge serves. */
  const watching = (nameId: string) => {
    const logger = memoryLogger()
    const servedWhenLive: Array<string | undefined> = []
    const info = logger.info.bind(logger)
    const watched: Logger = {
      ...logger,
      info: (line: string) => {
        if (line.startsWith('Live at ')) servedWhenLive.push(live(nameId))
        info(line)
      },
    }
    return { logger, watched, servedWhenLive }
  }

  const publish = (inputs: Record<string, string>, logger: Logger, signal?: AbortSignal) =>
    runOperation(
      publishOperation,
      publishOperation.read(
        getter({ 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, 'cdn-domain': cdn, ...inputs }),
      ),
      { logger, signal },
    )

  test('a promotion says "Live at" only once the host serves the promoted version', async () => {
    const { logger, watched, servedWhenLive } = watching('prod-x')
    const result = await publish({ namespace: 'prod-x', 'from-namespace': 'stage-x' }, watched)
    assert.notEqual(result.versionId, versions.candidate, "a version of prod-x's own config")
    assert.equal(result.verification?.verified, true, logger.lines.join('\n'))
    assert.deepEqual(
      servedWhenLive,
      [result.versionId],
      'the edge served the promoted version when it was said live',
    )
    assert.match(logger.lines.join('\n'), /Checking that \S+ serves this build/)
  })

  test('a rollback to previous says "Live at" only once the host serves another build than before', async () => {
    const { logger, watched, servedWhenLive } = watching('prod-x')
    const result = await publish({ namespace: 'prod-x', 'version-id': 'previous' }, watched)
    assert.equal(result.versionId, versions.v1)
    assert.equal(result.verification?.verified, true, logger.lines.join('\n'))
    assert.deepEqual(servedWhenLive, [versions.v1])
    assert.match(logger.lines.join('\n'), /serving another build than before/)
  })

  test('verify false: published, said not checked, never "Live at"', async () => {
    const logger = memoryLogger()
    const result = await publish(
      { namespace: 'prod-x', 'from-namespace': 'stage-x', verify: 'false' },
      logger,
    )
    assert.equal(result.verification, undefined)
    assert.match(logger.lines.join('\n'), /Published at \S+ \(not checked: verify is false\)/)
    assert.ok(!logger.lines.some((line) => line.includes('Live at')))
  })

  test('a check cancelled says it was cancelled and what the namespace serves', async () => {
    const controller = new AbortController()
    const logger = memoryLogger()
    const watched: Logger = {
      ...logger,
      info: (line: string) => {
        // Cancelled once the check has started: the version is published, not yet seen.
        if (line.startsWith('Checking that ')) controller.abort(new Error('The run was cancelled (SIGINT)'))
        logger.info(line)
      },
    }
    const error = await publish(
      { namespace: 'prod-x', 'version-id': versions.v0! },
      watched,
      controller.signal,
    ).then(
      () => assert.fail('the publish succeeded'),
      (e: unknown) => e,
    )
    assert.ok(error instanceof OperationStoppedError, String(error))
    assert.match(
      error.message,
      new RegExp(
        `published it to namespace prod-x; not checked: the check was cancelled after \\d+\\.\\d s; the namespace serves version '[^']+' \\(${versions.v0}\\), published but not yet seen at `,
      ),
    )
    assert.ok(!error.message.includes('verify is false'))
  })
})
