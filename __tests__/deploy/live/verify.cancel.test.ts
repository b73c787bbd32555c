// A deploy cancelled while it checks that its build is served says so, and what the namespace serves:
// never "not checked (verify is false)". The emulator's publishes never reach the edge within the test,
// and the run is cancelled as soon as the check starts (an event, not a time).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { previewRecord } from '../../../src/actions/preview-record.ts'
import { CancelledError } from '../../../src/common/cancel.ts'
import { memoryLogger, type Logger } from '../../../src/common/logger.ts'
import { deploy, deployFailure } from '../../../src/deploy/pipeline.ts'
import { failureReport, liveCell } from '../../../src/deploy/account.ts'
import { renderText } from '../../../src/common/report.ts'
import type { Emulator } from '../../../src/emulator/index.ts'
import { readInputs } from '../../../src/inputs/deploy.ts'
import { GAME, TOKEN } from '../../support/actions.ts'
import { startTestEmulator } from '../../support/emulator.ts'
import { getter, tempDir, writeTree } from '../../support/helpers.ts'

describe('a deploy cancelled while its build is checked', () => {
  let emulator: Emulator
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false, publishDelayMs: 600_000 })
  })
  after(() => emulator.close())

  test('says the check was cancelled, and which version the namespace serves', async () => {
    const path = await tempDir()
    await writeTree(path, { 'index.html': '<title>x</title>' })
    const controller = new AbortController()
    const logger = memoryLogger()
    const watched: Logger = {
      ...logger,
      info: (line: string) => {
        logger.info(line)
        if (line.startsWith('Checking that ')) controller.abort(new CancelledError('SIGINT'))
      },
    }
    const inputs = readInputs(
      getter({
        'api-url': emulator.url,
        token: TOKEN,
        'game-id': GAME,
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
        path,
        namespace: 'cancel-me',
      }),
    )
    const failed = await deploy(inputs, {
      logger: watched,
      tempDir: await tempDir(),
      signal: controller.signal,
    }).then(
      () => assert.fail('the deploy succeeded'),
      (error: unknown) => deployFailure(error),
    )
    const { partial } = failed
    assert.ok(partial?.published, 'the build was published before the check')
    assert.equal(partial.verification?.cancelled, true)
    const cell = liveCell(partial)
    assert.match(
      cell,
      new RegExp(
        `^not checked: the check was cancelled after \\d+\\.\\d s; the namespace serves version '[^']+' \\(${partial.published.versionId}\\), published but not yet seen at http://`,
      ),
    )
    const report = renderText(failureReport(failed.error, partial))
    assert.ok(!report.includes('verify is false'), report)
    assert.match(
      report,
      /while the host was checked: the build was published; not checked: the check was cancelled/,
    )
    // The preview's comment says it too.
    const { status } = previewRecord(
      { kind: 'failed', error: failed.error, partial, namespaceId: partial.provisioned.namespaceId! },
      { key: 'k', previous: undefined, namespaceNameId: 'cancel-me', commit: undefined },
    )
    assert.match(
      status,
      /^🛑 The run was cancelled \(SIGINT\) while its build was checked: not checked\\: the check was cancelled/,
    )
    assert.ok(!status.includes('verify is false'), status)
    assert.match(
      logger.lines.join('\n'),
      /The check of \S+ was cancelled after \d+\.\d s: namespace cancel-me serves version/,
    )
  })
})
