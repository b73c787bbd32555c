// Never "live" for a 404: a build with no index.html at its root (a Unity build given one folder too
// deep, its inner Build/) is refused before anything is created, through dist/index.js and the CLI,
// naming the folder to give; require-index: false deploys a site that is no page on purpose.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type Emulator } from '../../src/emulator/index.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { unityBuild } from '../support/web-builds.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'

const NODE = process.env.GAMEHOST_CLI_NODE || process.execPath

async function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(NODE, [path.join(root, 'dist/cli/index.js'), ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const [code] = (await once(child, 'close')) as [number | null]
  return { code, stderr }
}

describe('a build without a root page', () => {
  let emulator: Emulator
  let unity: string
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false })
    unity = await tempDir()
    await writeTree(unity, unityBuild('br'))
  })
  after(() => emulator.close())

  const nothingCreated = () => {
    assert.deepEqual(emulator.sites(GAME), [], 'no site')
    assert.ok(
      emulator.requests.every((r) => r.method === 'GET'),
      emulator.requests.map((r) => `${r.method} ${r.path}`).join('\n'),
    )
  }
  const refusal = (build: string) =>
    `has no index.html at its root, so the site's / would answer 404: it looks like the Build/ folder inside a ` +
    `Unity WebGL build (game.data.br, game.framework.js.br, game.loader.js). The site is its parent folder, ` +
    `which holds index.html and Build/: give path: ${path.dirname(build)}`

  test("the action: Unity's inner Build/ is refused naming its parent, before anything is created", async () => {
    const build = path.join(unity, 'Build')
    const run = await runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults: await actionDefaults(path.join(root, 'action.yml')),
      cwd: root,
      inputs: { 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, path: build, namespace: 'pr-3' },
    })
    assert.equal(run.exitCode, 1, run.stdout)
    const errors = run.stdout.split('\n').filter((l) => l.startsWith('::error::'))
    assert.equal(errors.length, 1, run.stdout)
    assert.ok(errors[0]!.includes(refusal(build)), errors[0])
    assert.ok(!/Live at|Published at/.test(run.stdout))
    nothingCreated()
  })

  test('the CLI: refused the same way, exit 2; --no-require-index deploys an asset host', async () => {
    const build = path.join(unity, 'Build')
    const env = { GAMEHOST_TOKEN: TOKEN }
    const connection = ['--api-url', emulator.url, '--game-id', GAME]
    const refused = await cli(['deploy', ...connection, '--path', build, '--namespace', 'pr-4'], env)
    assert.equal(refused.code, 2, refused.stderr)
    assert.ok(refused.stderr.includes(refusal(build)), refused.stderr)
    nothingCreated()

    const assets = await tempDir()
    await writeTree(assets, { 'sprites/hero.png': 64, 'audio/theme.ogg': 128 })
    const deployed = await cli(
      [
        'deploy',
        ...connection,
        '--path',
        assets,
        '--namespace',
        'assets',
        '--no-require-index',
        '--no-verify',
      ],
      env,
    )
    assert.equal(deployed.code, 0, deployed.stderr)
    assert.equal(emulator.sites(GAME).filter((s) => s.completed).length, 1)
  })
})
