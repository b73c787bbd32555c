// Failures that leave an account, through dist/index.js: the outputs known so far, a job summary of what
// failed, what was done before it and what a re-run will do; a missing GITHUB_STEP_SUMMARY is a warning.
import assert from 'node:assert/strict'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { FaultOptions } from '../../src/emulator/faults.ts'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { siteFiles, tempDir, writeTree } from '../support/helpers.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'

const VERSION = '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53'

describe('a failed run leaves an account', () => {
  let site: string
  let defaults: Record<string, string>
  const emulators: Emulator[] = []
  before(async () => {
    site = await tempDir()
    await writeTree(site, siteFiles(6))
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(() => Promise.all(emulators.map((e) => e.close())))

  const emulatorWith = async (faults?: FaultOptions) => {
    const emulator = await startTestEmulator({ faults, rateLimit: false })
    emulators.push(emulator)
    return emulator
  }
  const deploy = (emulator: Emulator, inputs: Record<string, string>, env: Record<string, string> = {}) =>
    runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      env,
      inputs: {
        'api-url': emulator.url,
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
        token: TOKEN,
        'game-id': GAME,
        path: site,
        ...inputs,
      },
    })

  test('a site create that fails after the namespace was created: namespace-id set, the summary tells all', async () => {
    const emulator = await emulatorWith({ script: { 'POST /cloud/games/:game_id/cdn/sites': ['503'] } })
    // publish: false creates a new namespace before the upload, as a deploy that publishes does not.
    const run = await deploy(emulator, {
      namespace: 'failed-1',
      'version-id': VERSION,
      retries: '0',
      publish: 'false',
    })
    assert.equal(run.exitCode, 1, run.stdout)
    const namespace = emulator.namespaces(GAME).find((n) => n.nameId === 'failed-1')!
    assert.equal(run.outputs['namespace-id'], namespace.namespaceId, 'the created namespace is never lost')
    assert.equal(run.outputs['site-id'], '')
    assert.match(run.stdout, /^::error::games\.cdn\.createGameCdnSite failed: 503 API_SERVICE_UNAVAILABLE/m)
    assert.match(run.summary, /<h2>gamehost deploy failed<\/h2>/)
    assert.match(run.summary, /Failed: games\.cdn\.createGameCdnSite failed: 503/)
    assert.match(run.summary, /<h3>Done before it<\/h3>/)
    assert.ok(run.summary.includes(`failed-1 <code>${namespace.namespaceId}</code> (created)`), run.summary)
    assert.match(
      run.summary,
      /<h3>A re-run<\/h3>\n<p>Namespace failed-1 \(.*\) stays as it is; a re-run reuses it/,
    )
  })

  test('a site create that fails when the deploy publishes: no namespace was created, nothing is left', async () => {
    const emulator = await emulatorWith({ script: { 'POST /cloud/games/:game_id/cdn/sites': ['503'] } })
    const run = await deploy(emulator, { namespace: 'failed-2', retries: '0' })
    assert.equal(run.exitCode, 1, run.stdout)
    assert.equal(emulator.namespaces(GAME).filter((n) => n.nameId === 'failed-2').length, 0)
    assert.equal(run.outputs['namespace-id'], '')
    assert.match(run.summary, /A re-run starts over: nothing this run did is in its way/)
  })

  test('a publish that fails leaves the namespace on its old version, and the summary says so', async () => {
    const emulator = await emulatorWith({ script: { 'POST /cloud/games/:game_id/versions': ['503'] } })
    const production = emulator.namespaces(GAME).find((n) => n.nameId === 'prod')!
    const run = await deploy(emulator, { namespace: 'prod', retries: '0' })
    assert.equal(run.exitCode, 1, run.stdout)
    assert.match(run.stdout, /^::error::games\.versions\.createGameVersion failed: 503/m)
    assert.equal(emulator.namespaces(GAME).find((n) => n.nameId === 'prod')!.versionId, production.versionId)
    assert.ok(emulator.site(run.outputs['site-id']!)?.completed, 'the site holds every file')
    assert.equal(run.outputs['url'], '')
    assert.equal(run.outputs['version-id'], '')
    assert.match(
      run.summary,
      /holds every file but was not published: the namespace still serves what it served before/,
    )
  })

  test('a retry-after beyond max-retry-after fails at once, saying when the limit lifts', async () => {
    const emulator = await emulatorWith({ script: { 'POST /cloud/games/:game_id/namespaces': ['429'] } })
    const run = await deploy(emulator, {
      namespace: 'limited-1',
      'version-id': VERSION,
      'max-retry-after': '0',
    })
    assert.equal(run.exitCode, 1, run.stdout)
    assert.match(
      run.stdout,
      /^::error::games\.namespaces\.createGameNamespace failed: 429 API_RATE_LIMIT.*\(the service asks to wait 1 s, until \d{4}-\d\d-\d\dT[\d:.]+Z: longer than the 0 s allowed; not retried\)$/m,
    )
    assert.equal(emulator.namespaces(GAME).filter((n) => n.nameId === 'limited-1').length, 0)
  })

  test('without GITHUB_STEP_SUMMARY a deploy succeeds, with a warning', async () => {
    const emulator = await emulatorWith()
    const run = await deploy(emulator, {}, { GITHUB_STEP_SUMMARY: '' })
    assert.equal(run.exitCode, 0, run.stdout)
    assert.ok(run.outputs['site-id'])
    assert.match(run.stdout, /^::warning::GITHUB_STEP_SUMMARY is not set .*: the job summary is skipped\.$/m)
    assert.equal(run.summary, '')
  })
  test('a GITHUB_OUTPUT that cannot be written fails naming it, and the account still says the build is live', async () => {
    const emulator = await emulatorWith()
    const output = path.join(await tempDir(), 'missing', 'output')
    const run = await deploy(emulator, { namespace: 'outputs-1' }, { GITHUB_OUTPUT: output })
    assert.equal(run.exitCode, 1, run.stdout)
    const errors = run.stdout.split('\n').filter((line) => line.startsWith('::error::'))
    assert.equal(errors.length, 1, run.stdout)
    assert.ok(
      errors[0]!.startsWith(`::error::GITHUB_OUTPUT (${output}) could not hold the outputs site-id, `),
      errors[0],
    )
    assert.match(run.stdout, /^::notice title=Deployed::Live at /m)
    assert.match(run.summary, /<h2>gamehost deploy<\/h2>/)
    assert.match(run.summary, /seen live after/)
    assert.doesNotMatch(run.summary, /Nothing: it stopped before anything was sent/)
    assert.ok(run.summary.includes(`GITHUB_OUTPUT (${output}) could not hold`), run.summary)
  })

  test('a GITHUB_STEP_SUMMARY that cannot be written is a warning naming it', async () => {
    const emulator = await emulatorWith()
    const summary = path.join(await tempDir(), 'missing', 'summary')
    const run = await deploy(emulator, { namespace: 'outputs-2' }, { GITHUB_STEP_SUMMARY: summary })
    assert.equal(run.exitCode, 0, run.stdout)
    assert.ok(run.outputs['site-id'])
    assert.ok(
      run.stdout.includes(`::warning::GITHUB_STEP_SUMMARY (${summary}) could not hold the job summary: `),
      run.stdout,
    )
  })
})
