// Going live through the committed bundles, as the runner runs them: a pull-request preview and a
// release deploy each leave their namespace serving the new files at the `url` output, fetched by its
// host name; the publish action and `gamehost publish` promote and roll back without uploading.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { fetchLocally, type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { GAME, TOKEN, root, runNewAction } from '../support/actions.ts'

const REPO = 'studio/space-game'

describe('deploys that go live', () => {
  let emulator: Emulator
  let defaults: Record<string, string>
  /** The emulator's origin as a browser on this machine names it: namespaces are served under it. */
  let cdn: string
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false })
    defaults = await actionDefaults(path.join(root, 'action.yml'))
    cdn = emulator.url.replace('127.0.0.1', 'localhost')
  })
  after(() => emulator.close())

  const build = async (title: string) => {
    const dir = await tempDir()
    await writeTree(dir, { 'index.html': `<title>${title}</title>`, 'game.js': `// ${title}` })
    return dir
  }
  const deploy = (inputs: Record<string, string>, event?: { name: string; payload: unknown }) =>
    runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      ...(event ? { event } : {}),
      inputs: {
        'api-url': emulator.url,
        token: TOKEN,
        'game-id': GAME,
        'cdn-domain': cdn,
        comment: 'false',
        ...inputs,
      },
    })
  const served = async (url: string) => (await fetchLocally(url)).text
  const liveVersion = (nameId: string) =>
    emulator.namespaces(GAME).find((n) => n.nameId === nameId)!.versionId

  test('a pull-request preview is served at its url, and its next push replaces it there', async () => {
    const pr = (sha: string) => ({
      name: 'pull_request',
      payload: {
        number: 7,
        pull_request: {
          number: 7,
          head: { sha, repo: { full_name: REPO } },
          base: { repo: { full_name: REPO } },
        },
      },
    })
    const first = await deploy({ path: await build('push one'), namespace: 'pr-7' }, pr('1111111aaaaaaa'))
    assert.equal(first.exitCode, 0, first.stdout)
    const url = first.outputs.url!
    assert.equal(url, `http://demo-game--pr-7.localhost:${new URL(emulator.url).port}/`)
    assert.match(first.stdout, new RegExp(`^::notice title=Deployed::Live at ${url}$`, 'm'))
    assert.ok(first.summary.includes(url), 'the summary shows the url')
    assert.equal(await served(url), '<title>push one</title>')
    assert.equal(liveVersion('pr-7'), first.outputs['version-id'])

    const second = await deploy({ path: await build('push two'), namespace: 'pr-7' }, pr('2222222bbbbbbb'))
    assert.equal(second.exitCode, 0, second.stdout)
    assert.equal(second.outputs.url, url)
    assert.notEqual(second.outputs['version-id'], first.outputs['version-id'])
    assert.equal(await served(url), '<title>push two</title>')
    assert.equal(await served(`${url}game.js`), '// push two')
  })

  test('a release deploy to prod is served at the game host; publish promotes and rolls back', async () => {
    const staging = await deploy({ path: await build('v2 candidate'), namespace: 'staging' })
    assert.equal(staging.exitCode, 0, staging.stdout)
    // The seed's prod, as a new game's: the service records a namespace's history from its first publish on.
    assert.equal((await deploy({ path: await build('v0'), namespace: 'prod' })).exitCode, 0)
    const prod = await deploy({ path: await build('v1'), namespace: 'prod' })
    assert.equal(prod.exitCode, 0, prod.stdout)
    const prodUrl = prod.outputs.url!
    assert.equal(prodUrl, `http://demo-game.localhost:${new URL(emulator.url).port}/`)
    assert.equal(await served(prodUrl), '<title>v1</title>')

    // Promotion: prod serves the build staging serves, on prod's config, nothing uploaded.
    const sites = emulator.sites(GAME).length
    const promoted = await runNewAction('publish', {
      'api-url': emulator.url,
      token: TOKEN,
      'game-id': GAME,
      namespace: 'prod',
      'from-namespace': 'staging',
      'cdn-domain': cdn,
    })
    assert.equal(promoted.exitCode, 0, promoted.stdout)
    assert.notEqual(
      promoted.outputs['version-id'],
      staging.outputs['version-id'],
      "a version of prod's config",
    )
    assert.equal(promoted.outputs.digest, staging.outputs.digest, "staging's build")
    assert.equal(promoted.outputs['replaced-version-id'], prod.outputs['version-id'])
    assert.equal(promoted.outputs.url, prodUrl)
    assert.equal(await served(prodUrl), '<title>v2 candidate</title>')
    assert.equal(emulator.sites(GAME).length, sites, 'nothing was uploaded')

    // Rollback in one step, from the CLI: the version published before the current one.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        path.join(root, 'dist/cli/index.js'),
        'publish',
        '--api-url',
        emulator.url,
        '--game-id',
        GAME,
        '--namespace',
        'prod',
        '--version-id',
        'previous',
        '--cdn-domain',
        cdn,
        '--json',
      ],
      { env: { PATH: process.env.PATH ?? '', GAMEHOST_TOKEN: TOKEN } },
    )
    const rolledBack = JSON.parse(stdout) as Record<string, string>
    assert.equal(rolledBack['version-id'], prod.outputs['version-id'])
    assert.equal(rolledBack['replaced-version-id'], promoted.outputs['version-id'])
    assert.equal(await served(prodUrl), '<title>v1</title>')
  })
})
