// Every action of the repository runs under GitHub's local runner for JavaScript actions,
// `@github/local-action`, from its TypeScript entry (which exports run() and does nothing at import),
// against the emulator: the way the README's Development section shows.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { GAME, NAMESPACE, RUNNING_LOBBY, TOKEN, root } from '../support/actions.ts'
import { tempDir } from '../support/helpers.ts'

const run = promisify(execFile)

interface LocalRun {
  stdout: string
  /** `::set-output name=...::` lines, as local-action's stand-in for @actions/core writes them. */
  outputs: Record<string, string>
  summary: string
}

describe('@github/local-action runs each action from its entry', () => {
  let emulator: Emulator
  before(async () => {
    emulator = await startTestEmulator()
  })
  after(() => emulator.close())

  /** `local-action run <action folder> <entry> <.env>`, the inputs as INPUT_* lines of the .env file. */
  async function localAction(
    folder: string,
    entry: string,
    inputs: Record<string, string>,
  ): Promise<LocalRun> {
    const dir = await tempDir()
    const summary = path.join(dir, 'summary.md')
    await writeFile(summary, '')
    const dotenv = Object.entries({ ...inputs, 'api-url': emulator.url, token: TOKEN, 'game-id': GAME })
      .map(([name, value]) => `INPUT_${name.toUpperCase()}=${value}`)
      .concat(`GITHUB_STEP_SUMMARY=${summary}`, `RUNNER_TEMP=${dir}`)
      .join('\n')
    await writeFile(path.join(dir, '.env'), dotenv + '\n')
    const { stdout } = await run(
      path.join(root, 'node_modules/.bin/local-action'),
      ['run', folder, entry, path.join(dir, '.env')],
      { cwd: root, env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1' } },
    )
    assert.match(stdout, /Running Action/)
    assert.doesNotMatch(stdout, /::error::/, stdout)
    assert.doesNotMatch(stdout, /does not export a run\(\) function/)
    const outputs = Object.fromEntries(
      [...stdout.matchAll(/^::set-output name=([\w-]+)::(.*)$/gm)].map((m) => [m[1]!, m[2]!]),
    )
    return { stdout, outputs, summary: await readFile(summary, 'utf8') }
  }

  test('deploy (src/actions/deploy.ts)', async () => {
    const { outputs } = await localAction('.', 'src/actions/deploy.ts', {
      path: path.join(root, 'example-site'),
      'site-name': 'local-action',
    })
    assert.match(outputs['site-id'] ?? '', /^[0-9a-f-]{36}$/)
    assert.equal(emulator.site(outputs['site-id']!)?.displayName, 'local-action')
    assert.equal(outputs['file-count'], '7')
  })

  test('servers (src/actions/servers.ts)', async () => {
    const { outputs, summary } = await localAction('servers', '../src/actions/servers.ts', {
      'environment-id': '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15',
    })
    assert.equal(outputs.count, '3')
    assert.match(summary, /gamehost servers/)
  })

  test('lobby-logs (src/actions/lobby-logs.ts)', async () => {
    const { outputs } = await localAction('lobby-logs', '../src/actions/lobby-logs.ts', {
      'namespace-id': NAMESPACE,
      'lobby-id': RUNNING_LOBBY.lobby_id,
    })
    assert.equal(outputs.failed, 'false')
  })

  test('avatars (src/actions/avatars.ts)', async () => {
    const { outputs } = await localAction('avatars', '../src/actions/avatars.ts', {})
    assert.equal(outputs.count, '3')
  })

  test('validate (src/actions/validate.ts)', async () => {
    const { outputs } = await localAction('validate', '../src/actions/validate.ts', {
      'namespace-id': NAMESPACE,
      'lobby-count-max': '64',
      'max-players': '16',
    })
    assert.equal(outputs.valid, 'true')
  })
})
