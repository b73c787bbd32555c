// A pull_request_target run whose event file cannot be read fails saying so, through dist/index.js,
// before anything is created: deployed as a push, a closed pull request's preview would get the build.
import assert from 'node:assert/strict'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { type Emulator } from '../../src/emulator/index.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { siteFiles, tempDir, writeTree } from '../support/helpers.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'

let emulator: Emulator
before(async () => {
  emulator = await startTestEmulator({ rateLimit: false })
})
after(() => emulator.close())

test('pull_request_target with an unreadable event file: one error saying why, nothing created', async () => {
  const site = await tempDir()
  await writeTree(site, siteFiles(3))
  const missing = path.join(await tempDir(), 'event.json')
  const run = await runAction({
    entry: path.join(root, 'dist/index.js'),
    defaults: await actionDefaults(path.join(root, 'action.yml')),
    cwd: root,
    event: { name: 'pull_request_target', payload: {} },
    env: { GITHUB_EVENT_PATH: missing },
    inputs: { 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, path: site, namespace: 'pr-5' },
  })
  assert.equal(run.exitCode, 1, run.stdout)
  const errors = run.stdout.split('\n').filter((l) => l.startsWith('::error::'))
  assert.equal(errors.length, 1, run.stdout)
  assert.ok(
    errors[0]!.startsWith(
      `::error::This is a pull_request_target run, but its event file (GITHUB_EVENT_PATH: ${missing}) could not be ` +
        'read as a pull request event, so nothing was deployed',
    ),
    errors[0],
  )
  assert.deepEqual(emulator.requests, [], 'nothing was asked of the service')
})
