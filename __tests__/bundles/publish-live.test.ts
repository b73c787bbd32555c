// The publish action (dist/publish) and `gamehost publish` (dist/cli) wait to see their change, against
// an emulator whose publishes reach the edge seconds later (the real service at its worst): when either
// has said "Live at" and ended, the namespace's host serves the version already. A publish that said so
// at once would end while the edge still served the build before (PUBLISH_DELAY_MS), and fail here.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { fetchLocally, type Emulator } from '../../src/emulator/index.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { GAME, TOKEN, root, runNewAction } from '../support/actions.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { tempDir, writeTree } from '../support/helpers.ts'

const PUBLISH_DELAY_MS = 2_000

describe('publish waits to see its change', () => {
  let emulator: Emulator
  let cdn: string
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false, publishDelayMs: PUBLISH_DELAY_MS })
    cdn = emulator.url.replace('127.0.0.1', 'localhost')
  })
  after(() => emulator.close())

  const deploy = async (namespace: string, title: string) => {
    const dir = await tempDir()
    await writeTree(dir, { 'index.html': `<title>${title}</title>`, 'game.js': `// ${title}` })
    const run = await runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults: await actionDefaults(path.join(root, 'action.yml')),
      cwd: root,
      inputs: {
        'api-url': emulator.url,
        token: TOKEN,
        'game-id': GAME,
        'cdn-domain': cdn,
        comment: 'false',
        path: dir,
        namespace,
      },
    })
    assert.equal(run.exitCode, 0, run.stdout)
    return run.outputs
  }
  const edge = (nameId: string) => emulator.namespaces(GAME).find((n) => n.nameId === nameId)!.liveVersionId

  test('the publish action promotes, and the CLI rolls back, each ending once the host serves the version', async () => {
    const staging = await deploy('stage-y', 'candidate')
    await deploy('prod-y', 'v0')
    const prod = await deploy('prod-y', 'v1')
    const url = prod.url!

    const promoted = await runNewAction('publish', {
      'api-url': emulator.url,
      token: TOKEN,
      'game-id': GAME,
      namespace: 'prod-y',
      'from-namespace': 'stage-y',
      'cdn-domain': cdn,
    })
    assert.equal(promoted.exitCode, 0, promoted.stdout)
    assert.equal(
      edge('prod-y'),
      promoted.outputs['version-id'],
      'the edge serves the promoted version at the end',
    )
    assert.equal(promoted.outputs.digest, staging.digest, "stage-y's build")
    assert.equal((await fetchLocally(url)).text, '<title>candidate</title>')
    assert.match(promoted.stdout, new RegExp(`^Live at ${url}: seen after \\d+\\.\\d s`, 'm'))
    assert.match(promoted.summary, /seen live after/)

    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [
        path.join(root, 'dist/cli/index.js'),
        'publish',
        ...['--api-url', emulator.url, '--game-id', GAME, '--namespace', 'prod-y'],
        ...['--version-id', 'previous', '--cdn-domain', cdn, '--json'],
      ],
      { env: { PATH: process.env.PATH ?? '', GAMEHOST_TOKEN: TOKEN } },
    )
    assert.equal((JSON.parse(stdout) as Record<string, string>)['version-id'], prod['version-id'])
    assert.equal(edge('prod-y'), prod['version-id'], 'the edge serves the version rolled back to at the end')
    assert.equal((await fetchLocally(url)).text, '<title>v1</title>')
    assert.match(stderr, new RegExp(`Live at ${url}: seen after`))
  })
})
