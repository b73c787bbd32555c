// A low open-files limit (`ulimit -n 64`) is read before the upload and lived within: the CLI, through
// its committed bundle, deploys a site of 600 files at 192 uploads asked for, without one EMFILE.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { siteFiles, tempDir, writeTree } from '../support/helpers.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'

const CLI = path.join(root, 'dist/cli/index.js')
// Only Linux's /proc tells a process its limit; elsewhere a full table is waited out (outcome.ts).
const skip = process.platform !== 'linux' && 'the open-files limit is read from /proc, which only Linux has'

describe('a low open-files limit', { skip }, () => {
  let emulator: Emulator
  let site: string
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false })
    site = await tempDir()
    await writeTree(site, siteFiles(600))
  })
  after(() => emulator.close())

  test('ulimit -n 64: the upload keeps within it from the start, and the deploy completes', async () => {
    const child = spawn(
      'sh',
      ['-c', 'ulimit -n 64 && exec "$0" "$@"', process.execPath, CLI, 'deploy', '--path', site],
      {
        env: {
          PATH: process.env.PATH ?? '',
          GAMEHOST_TOKEN: TOKEN,
          GAMEHOST_API_URL: emulator.url,
          GAMEHOST_GAME_ID: GAME,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.stdout.resume()
    const [code] = (await once(child, 'close')) as [number | null]
    assert.equal(code, 0, stderr)
    assert.match(
      stderr,
      /\d+ file descriptors free under this process's open-files limit: \d+ uploads at a time, not 192/,
    )
    assert.doesNotMatch(stderr, /EMFILE|Out of file descriptors/)
    const sites = emulator.sites(GAME)
    assert.equal(sites.at(-1)?.completed, true)
  })
})
