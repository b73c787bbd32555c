// Failures that name the input to fix, through dist/index.js: a refused api-url fails in seconds, not
// a minute; the service's refusal of the token names token, of the game game-id; a failed run's
// file-count and total-bytes say what was collected; the summary says to fix the input where a re-run
// would only fail the same way, instead of "a re-run starts over".
import assert from 'node:assert/strict'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { deadPort, siteFiles, tempDir, writeTree } from '../support/helpers.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'

const entry = path.join(root, 'dist/index.js')
const UNKNOWN_NAMESPACE = '00000000-0000-4000-8000-000000000000'

describe('failures that name the input to fix', () => {
  let site: string
  let fileCount = 0
  let totalBytes = 0
  let defaults: Record<string, string>
  let emulator: Emulator
  before(async () => {
    site = await tempDir()
    const written = await writeTree(site, siteFiles(9))
    fileCount = written.size
    totalBytes = [...written.values()].reduce((sum, bytes) => sum + bytes.length, 0)
    defaults = await actionDefaults(path.join(root, 'action.yml'))
    emulator = await startTestEmulator({
      rateLimit: false,
      faults: { script: { 'POST /cloud/games/:game_id/cdn/sites': ['503'] } },
    })
  })
  after(() => emulator.close())

  const deploy = (inputs: Record<string, string>) =>
    runAction({
      entry,
      defaults,
      cwd: root,
      inputs: { 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, path: site, ...inputs },
    })
  const errors = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('::error::'))
  // The text under "A re-run" (in a paragraph, or not, as the summary's writer has it).
  const rerun = (summary: string) => /<h3>A re-run<\/h3>\n(?:<p>)?(.*?)(?:<\/p>)?$/m.exec(summary)?.[1] ?? ''

  test('a refused api-url (a wrong port) fails within 15 s, naming api-url', async () => {
    const port = await deadPort()
    const started = Date.now()
    const run = await deploy({ 'api-url': `http://127.0.0.1:${port}` })
    const elapsed = Date.now() - started
    assert.equal(run.exitCode, 1, run.stdout)
    assert.ok(elapsed < 15_000, `the step took ${elapsed} ms`)
    const found = errors(run.stdout)
    assert.equal(found.length, 1, run.stdout)
    assert.ok(
      found[0]!.startsWith(
        `::error::games.cdn.createGameCdnSite failed: the connection was refused (ECONNREFUSED) (127.0.0.1:${port}): ` +
          'nothing at api-url has answered in this run; check api-url (its host and port) (gave up after 3 attempts)',
      ),
      found[0],
    )
    assert.equal(
      rerun(run.summary),
      'A re-run with the same inputs most likely fails the same way: check api-url first.',
    )
    assert.equal(run.outputs['file-count'], String(fileCount), 'what was collected, not 0')
    assert.equal(run.outputs['total-bytes'], String(totalBytes))
  })

  test('a token of another game names game-id and token; the service code, message and ray id stay', async () => {
    const run = await deploy({ token: 'gamehost-other-token' })
    assert.equal(run.exitCode, 1, run.stdout)
    const [error] = errors(run.stdout)
    assert.match(
      error!,
      /^::error::games\.cdn\.createGameCdnSite failed: 403 API_FORBIDDEN: The bearer token does not grant access to game "[0-9a-f-]{36}"\. \(ray id [0-9a-f-]{36}\)\. The token does not grant access to this game .*: check game-id, and that token is a token of that game/,
    )
    assert.equal(
      rerun(run.summary),
      'A re-run with the same inputs fails the same way: check game-id and token first.',
    )
  })

  test('a token the service does not know names token', async () => {
    const run = await deploy({ token: 'not-a-token' })
    assert.equal(run.exitCode, 1, run.stdout)
    assert.match(errors(run.stdout)[0]!, /400 TOKEN_INVALID: .* \(ray id [0-9a-f-]{36}\)\. .*: check token/)
    assert.equal(rerun(run.summary), 'A re-run with the same inputs fails the same way: fix token first.')
    assert.doesNotMatch(run.stdout, /starts over/)
  })

  test('a namespace-id the game does not have: fix the input, not "a re-run starts over"', async () => {
    const run = await deploy({ 'namespace-id': UNKNOWN_NAMESPACE })
    assert.equal(run.exitCode, 1, run.stdout)
    assert.match(
      errors(run.stdout)[0]!,
      /^::error::namespace-id '0{8}-0000-4000-8000-0{12}' is not a namespace of game/,
    )
    assert.equal(
      rerun(run.summary),
      'A re-run with the same inputs fails the same way: fix the input the error names first.',
    )
    assert.match(run.stdout, /^The deploy failed\. A re-run with the same inputs fails the same way/m)
    assert.doesNotMatch(run.stdout + run.summary, /starts over/)
  })

  test('a path that does not exist: the summary says to fix it', async () => {
    const run = await deploy({ path: path.join(site, 'missing') })
    assert.equal(run.exitCode, 1, run.stdout)
    assert.match(errors(run.stdout)[0]!, /^::error::path: .* does not exist/)
    assert.equal(
      rerun(run.summary),
      'A re-run with the same inputs fails the same way: fix the input the error names first.',
    )
    assert.doesNotMatch(run.stdout + run.summary, /starts over/)
  })

  test('an input refused before anything runs (namespace: PR-12) still writes the summary', async () => {
    const run = await deploy({ namespace: 'PR-12' })
    assert.equal(run.exitCode, 1, run.stdout)
    assert.match(
      errors(run.stdout)[0]!,
      /^::error::namespace 'PR-12' is not a valid name id: .*write namespace: pr-12/,
    )
    assert.match(run.summary, /^<h2>gamehost deploy failed<\/h2>/)
    assert.match(
      run.summary,
      /Failed: namespace &#39;PR-12&#39; is not a valid name id|Failed: namespace 'PR-12'/,
    )
    assert.match(run.summary, /Nothing: it stopped before anything was sent to the service\./)
    assert.equal(
      rerun(run.summary),
      'A re-run with the same inputs fails the same way: fix the input the error names first.',
    )
  })

  test('a site creation that fails: file-count and total-bytes are what was collected; a re-run starts over', async () => {
    // The emulator refuses the first site creation with a 503; retries 0 makes it the run's end.
    const run = await deploy({ retries: '0' })
    assert.equal(run.exitCode, 1, run.stdout)
    assert.match(errors(run.stdout)[0]!, /createGameCdnSite failed: 503 API_SERVICE_UNAVAILABLE/)
    assert.equal(run.outputs['file-count'], String(fileCount))
    assert.equal(run.outputs['total-bytes'], String(totalBytes))
    assert.equal(run.outputs['site-id'], '')
    assert.match(run.summary, new RegExp(`${fileCount} \\([^)]+\\) collected; none uploaded`))
    assert.equal(rerun(run.summary), 'A re-run starts over: nothing this run did is in its way.')
  })
})
