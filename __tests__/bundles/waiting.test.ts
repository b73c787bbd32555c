// A long seen-live wait says how it stands, through dist/cli/index.js against the emulator: its second
// publish never reaches the host (the slowest edge there is), so the CLI waits the whole of
// --verify-timeout 16 and, 15 s in, says what the host serves instead and how long is left. The line is
// due on the CLI's own clock before the wait's bound is: no race with the emulator's timing.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestEmulator } from '../support/emulator.ts'
import type { Emulator } from '../../src/emulator/index.ts'
import { GAME, TOKEN } from '../support/actions.ts'
import { runCli } from '../support/cli.ts'
import { tempDir, writeTree } from '../support/helpers.ts'

describe('a long seen-live wait, through the CLI', () => {
  let emulator: Emulator
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false, faults: { lostPublishes: [2] } })
  })
  after(() => emulator.close())

  const deploy = async (title: string, ...flags: string[]) => {
    const dir = await tempDir()
    await writeTree(dir, { 'index.html': `<title>${title}</title>` })
    const connection = ['--api-url', emulator.url, '--game-id', GAME]
    return runCli(['deploy', ...connection, '--namespace', 'waited', '--path', dir, ...flags], {
      GAMEHOST_TOKEN: TOKEN,
    })
  }

  test('says every 15 s what the host serves instead and how long is left, then rolls back', async () => {
    const first = await deploy('one')
    assert.equal(first.code, 0, first.stdout + first.stderr)
    const digest = /^\s*Digest\s+(sha256:[0-9a-f]{12})/m.exec(first.stdout)?.[1]
    assert.ok(digest, first.stdout)

    const second = await deploy('two', '--verify-timeout', '16')
    assert.equal(second.code, 1, second.stdout + second.stderr)
    // The log is on stderr, the report on stdout.
    const log = second.stderr
    const url = /Checking that (\S+) serves this build/.exec(log)?.[1]
    assert.ok(url, log)
    const waiting = log.split('\n').filter((line) => line.includes('Still waiting for'))
    assert.equal(waiting.length, 1, log)
    assert.match(
      waiting[0]!.trim(),
      new RegExp(
        `^Still waiting for ${url.replaceAll('.', '\\.')} to serve this build, after 15\\.\\d s \\(\\d+ checks\\): / had other bytes than ` +
          `the build's index\\.html \\(SHA-256 [0-9a-f]{12}…, not [0-9a-f]{12}…\\), as it serves build ${digest}…(?: \\(commit [0-9a-f]{7}\\))?, ` +
          `the one it served before; [12] s left$`,
      ),
    )
    assert.match(log, /Namespace waited was put back on version/)
  })
})
