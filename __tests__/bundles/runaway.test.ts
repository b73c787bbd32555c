// A `files` pattern that backtracking matchers take minutes over (a star before each of a dozen
// letters, against long names), through dist/: the action and the CLI hear SIGTERM sent while they
// collect the files, and end saying the run was cancelled. The signal is sent on the log line that
// starts the collection; the bound on the exit is generous (a backtracking match takes minutes here).
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { siteFiles, tempDir, writeTree } from '../support/helpers.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'

const RUNAWAY = '*a*b*c*d*e*f*g*h*i*j*k*l'
/** Names that hold every letter but the last, 8 times each: minimatch's expression tries every placing of the stars. */
const LONG_NAMES = Object.fromEntries(
  ['', 'x', 'y'].map((prefix) => [
    `levels/${prefix}${[...'abcdefghijk'].map((c) => c.repeat(8)).join('')}.json`,
    '{}',
  ]),
)
/** Far above the few seconds a cancel may take, far below the minutes a backtracking match takes. */
const EXIT_BOUND_MS = 60_000

/** Resolves when `child` (or the run) has ended, rejects once EXIT_BOUND_MS passed since the signal. */
async function endsInBound<T>(ending: Promise<T>, kill: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      kill()
      reject(new Error(`still running ${EXIT_BOUND_MS} ms after SIGTERM`))
    }, EXIT_BOUND_MS)
  })
  try {
    return await Promise.race([ending, late])
  } finally {
    clearTimeout(timer)
  }
}

describe('a runaway files pattern', () => {
  let emulator: Emulator
  let site: string
  before(async () => {
    // Every PUT stalls: a run that got past the collection is still uploading when the signal comes.
    emulator = await startTestEmulator({ faults: { putStallCount: 1_000_000 }, rateLimit: false })
    site = await tempDir()
    await writeTree(site, { ...siteFiles(6), ...LONG_NAMES })
  })
  after(() => emulator.close())

  test('the action hears SIGTERM sent while it collects, and says the run was cancelled', async () => {
    let pid: number | undefined
    let signalled = false
    const run = runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults: await actionDefaults(path.join(root, 'action.yml')),
      cwd: root,
      inputs: {
        'api-url': emulator.url,
        token: TOKEN,
        'game-id': GAME,
        path: site,
        files: `**\n!**/${RUNAWAY}`,
        concurrency: '2',
      },
      onSpawn: (id) => (pid = id),
      onStdout: (stdout) => {
        if (signalled || !/^::group::Collect files$/m.test(stdout)) return
        signalled = true
        process.kill(pid!, 'SIGTERM')
      },
    })
    const result = await endsInBound(run, () => pid && process.kill(pid, 'SIGKILL'))
    assert.ok(signalled, result.stdout)
    assert.notEqual(result.exitCode, 0)
    assert.match(result.stdout, /^::error::The run was cancelled \(SIGTERM\)$/m)
  })

  test('the CLI hears SIGTERM sent while it collects, and says the run was cancelled', async () => {
    const args = ['deploy', '--api-url', emulator.url, '--game-id', GAME, '--path', site]
    const child: ChildProcess = spawn(
      process.execPath,
      [path.join(root, 'dist/cli/index.js'), ...args, '--files', '**', '--files', `!**/${RUNAWAY}`],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', GAMEHOST_TOKEN: TOKEN },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stdout = ''
    let stderr = ''
    let signalled = false
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
      if (signalled || !/Collect files/.test(stderr)) return
      signalled = true
      child.kill('SIGTERM')
    })
    const [code] = (await endsInBound(once(child, 'close'), () => child.kill('SIGKILL'))) as [number | null]
    assert.ok(signalled, stderr)
    assert.equal(code, 130, stdout + stderr)
    assert.match(stderr, /The run was cancelled \(SIGTERM\)/)
  })
})
