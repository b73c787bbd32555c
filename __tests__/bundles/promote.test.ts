// Promotion through dist/cli/index.js against the emulator at its defaults: a private preview's build,
// with its routes, promoted to prod after prod's matchmaker changed; refusals before any write.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import { after, before, describe, test } from 'node:test'
import { request } from 'undici'
import { startEmulator, type Emulator } from '../../src/emulator/index.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'
import { tempDir, writeTree } from '../support/helpers.ts'

const PASSWORD = 'reviewers-only-9'
/** The demo game's 0.9.0: a matchmaker other than 1.0.0's, which `prod` serves when a preview is made. */
const OLD_RELEASE = '5a0e7c2d-4b9f-4e1a-8d36-2c7f1b9e4a08'

interface CliRun {
  code: number
  stdout: string
  stderr: string
}

describe('gamehost publish --from-namespace, through the bundle', () => {
  let emulator: Emulator
  before(async () => {
    emulator = await startEmulator()
  })
  after(() => emulator.close())

  const cli = async (args: string[], env: Record<string, string> = {}): Promise<CliRun> => {
    const options = { env: { PATH: process.env.PATH ?? '', GAMEHOST_TOKEN: TOKEN, ...env } }
    const all = [path.join(root, 'dist/cli/index.js'), ...args, '--api-url', emulator.url, '--game-id', GAME]
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, all, options)
      return { code: 0, stdout, stderr }
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string }
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
    }
  }
  const hostOf = (nameId: string) =>
    new URL(
      emulator.namespaceUrl(GAME, emulator.namespaces(GAME).find((ns) => ns.nameId === nameId)!.namespaceId),
    ).host
  const get = async (nameId: string, urlPath: string) => {
    const answer = await request(`${emulator.url}${urlPath}`, { headers: { host: hostOf(nameId) } })
    return { status: answer.statusCode, headers: answer.headers, text: await answer.body.text() }
  }
  const versionOf = async (versionId: string) => {
    const answer = await request(`${emulator.url}/cloud/games/${GAME}/versions/${versionId}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    })
    return ((await answer.body.json()) as { version: { config: Record<string, unknown> } }).version.config
  }
  const writes = () => emulator.requests.filter((r) => r.method !== 'GET' && r.method !== 'HEAD').length

  test('a siteless source is refused before any write; a private preview is promoted with its routes, on prod config', async () => {
    const before = writes()
    const refused = await cli(['publish', '--namespace', 'prod', '--from-namespace', 'staging'])
    assert.equal(refused.code, 1, refused.stderr)
    assert.match(
      refused.stderr,
      /--from-namespace 'staging' serves version '0\.0\.1' .* which has no CDN site/,
    )
    assert.equal(writes(), before, 'nothing written')

    const build = await tempDir()
    await writeTree(build, { 'index.html': '<title>reviewed</title>', 'game.js': '// the reviewed game' })
    const headers = '"**/*.js": {X-Reviewed: "yes"}'
    const preview = await cli(
      ['deploy', '--path', build, '--namespace', 'pr-12', '--headers', headers, '--json'],
      { GAMEHOST_BASIC_AUTH: `tester:${PASSWORD}` },
    )
    assert.equal(preview.code, 0, preview.stderr)
    const { digest } = JSON.parse(preview.stdout) as { digest: string }
    assert.equal((await get('pr-12', '/')).status, 401, 'the preview is private')
    // prod's matchmaker changes after the preview was made from it.
    const release = await tempDir()
    await writeTree(release, { 'index.html': '<title>release</title>' })
    const prod = await cli(['deploy', '--path', release, '--namespace', 'prod', '--version-id', OLD_RELEASE])
    assert.equal(prod.code, 0, prod.stderr)

    const wrong = await cli(
      [
        'publish',
        '--namespace',
        'prod',
        '--from-namespace',
        'pr-12',
        '--expect-digest',
        `sha256:${'0'.repeat(64)}`,
      ],
      { GAMEHOST_FROM_BASIC_AUTH: `tester:${PASSWORD}` },
    )
    assert.equal(wrong.code, 1, wrong.stderr)
    assert.match(
      wrong.stderr,
      new RegExp(`pr-12 serves build ${digest}, not --expect-digest sha256:0+: nothing was published`),
    )
    assert.equal((await get('prod', '/')).text, '<title>release</title>')

    const promoted = await cli(
      ['publish', '--namespace', 'prod', '--from-namespace', 'pr-12', '--expect-digest', digest, '--json'],
      { GAMEHOST_FROM_BASIC_AUTH: `tester:${PASSWORD}` },
    )
    assert.equal(promoted.code, 0, promoted.stderr)
    const outputs = JSON.parse(promoted.stdout) as Record<string, string>
    assert.equal(outputs.digest, digest)
    assert.ok(!`${promoted.stdout}${promoted.stderr}`.includes(PASSWORD), 'the password is never shown')
    assert.match(
      promoted.stderr,
      /Promoting build sha256:\w+ (\(commit \w+\) )?from pr-12 .*: 0 bytes to upload/,
    )
    assert.match(promoted.stderr, /Live at http:\/\/demo-game\.localhost:\d+\/: seen after/)
    const page = await get('prod', '/')
    assert.deepEqual(
      [page.status, page.text],
      [200, '<title>reviewed</title>'],
      'served to anyone, no credentials',
    )
    assert.equal((await get('prod', '/game.js')).headers['x-reviewed'], 'yes', "the build's routes")
    const config = await versionOf(outputs['version-id']!)
    assert.deepEqual(config.matchmaker, (await versionOf(OLD_RELEASE)).matchmaker, "prod's own matchmaker")
  })
})
