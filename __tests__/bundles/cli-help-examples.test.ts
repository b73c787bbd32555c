// Every example that `gamehost <command> --help` prints runs as written against the emulator's demo
// game, through the committed bundle: its ids have the service's form and name things the demo has.
// Only the API's address is the emulator's, the token comes from GAMEHOST_TOKEN, and a deploy that
// would create something runs with --dry-run (a dry run, calling nothing, needs no --api-url).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { TOKEN, root } from '../support/actions.ts'
import { tempDir, writeTree } from '../support/helpers.ts'

const run = promisify(execFile)
const CLI = path.join(root, 'dist/cli/index.js')
const COMMANDS = ['deploy', 'servers', 'lobby-logs', 'avatars', 'validate', 'publish', 'close']

/** Shell words of an example: plain words and single-quoted strings, as the examples write them. */
function words(line: string): string[] {
  const found: string[] = []
  for (const match of line.matchAll(/'([^']*)'|(\S+)/g)) found.push(match[1] ?? match[2]!)
  return found
}

async function examplesOf(command: string): Promise<string[]> {
  const { stdout } = await run(process.execPath, [CLI, command, '--help'])
  const lines = stdout.split('\n')
  const start = lines.indexOf('Examples:')
  assert.ok(start >= 0, `gamehost ${command} --help shows examples`)
  return lines
    .slice(start + 1)
    .filter((line) => line.startsWith('  gamehost') || line.startsWith('  GAMEHOST_TOKEN='))
    .map((line) => line.trim())
}

describe('the examples of gamehost --help', () => {
  let emulator: Emulator
  let cwd: string
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false })
    cwd = await tempDir()
    await writeTree(path.join(cwd, 'build'), {
      'index.html': '<h1>game</h1>',
      'game.js': 'x',
      'game.js.map': '{}',
    })
  })
  after(() => emulator.close())

  for (const command of COMMANDS) {
    test(command, async () => {
      const examples = await examplesOf(command)
      assert.ok(examples.length > 0)
      for (const example of examples) {
        const args = words(example.replace(/^GAMEHOST_TOKEN=\S+ /, ''))
        assert.equal(args.shift(), 'gamehost', example)
        const api = args.indexOf('--api-url')
        // A dry run calls nothing: it needs no service, and its example names none.
        assert.ok(api >= 0 || args.includes('--dry-run'), example)
        if (api >= 0) args[api + 1] = emulator.url
        if (command === 'deploy' && !args.includes('--dry-run')) args.push('--dry-run')
        const result = await run(process.execPath, [CLI, ...args], {
          cwd,
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', GAMEHOST_TOKEN: TOKEN },
        }).catch((error: { code: number; stdout: string; stderr: string }) => error)
        assert.ok(
          !('code' in result && result.code),
          `${example}\n${'stderr' in result ? result.stderr : ''}`,
        )
      }
    })
  }
})
