// Every example that `gamehost <command> --help` prints runs as written against the emulator's demo
// game, through the committed bundle, in the order --help gives them: its ids have the service's form
// and name things the demo has. Only the addresses are the test's own: the emulator's for --api-url,
// a stand-in for GitHub's API for the sweep; the tokens (`GAMEHOST_TOKEN=...`, `GITHUB_TOKEN=...`)
// are the demo's. An example wrapped to the width is read as a shell reads ` \`.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { startGitHubStub, type GitHubStub } from '../support/github-api.ts'
import { TOKEN, root } from '../support/actions.ts'
import { tempDir, writeTree } from '../support/helpers.ts'

const run = promisify(execFile)
const CLI = path.join(root, 'dist/cli/index.js')
const COMMANDS = ['deploy', 'servers', 'lobby-logs', 'avatars', 'validate', 'publish', 'close', 'sweep']
const GITHUB_TOKEN = 'gh-example'

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
  const end = lines.indexOf('', start)
  return lines
    .slice(start + 1, end)
    .join('\n')
    .replace(/ \\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.trim())
}

describe('the examples of gamehost --help', () => {
  let emulator: Emulator
  let github: GitHubStub
  let cwd: string
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false })
    github = await startGitHubStub({
      [GITHUB_TOKEN]: { user: { login: 'octo', type: 'User' }, canComment: false },
    })
    cwd = await tempDir()
    await writeTree(path.join(cwd, 'build'), {
      'index.html': '<h1>game</h1>',
      'game.js': 'x',
      'game.js.map': '{}',
    })
  })
  after(async () => {
    await emulator.close()
    await github.close()
  })

  for (const command of COMMANDS) {
    test(command, async () => {
      const examples = await examplesOf(command)
      assert.ok(examples.length > 0)
      for (const example of examples) {
        const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }
        const args = words(example)
        // The environment the example sets, with the demo's tokens for its `...`.
        while (/^[A-Z_]+=/.test(args[0] ?? '')) {
          const [name, value] = args.shift()!.split('=') as [string, string]
          env[name] = value === '...' ? (name === 'GITHUB_TOKEN' ? GITHUB_TOKEN : TOKEN) : value
        }
        env.GAMEHOST_TOKEN ??= TOKEN
        env.GITHUB_API_URL = github.url
        assert.equal(args.shift(), 'gamehost', example)
        const api = args.indexOf('--api-url')
        // A dry run calls nothing: it needs no service, and its example names none.
        assert.ok(api >= 0 || args.includes('--dry-run'), example)
        if (api >= 0) args[api + 1] = emulator.url
        const result = await run(process.execPath, [CLI, ...args], { cwd, env }).catch(
          (error: { code: number; stdout: string; stderr: string }) => error,
        )
        assert.ok(
          !('code' in result && result.code),
          `${example}\n${'stderr' in result ? result.stderr : ''}`,
        )
      }
    })
  }
})
