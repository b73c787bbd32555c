// The CLI's checks of issue 36, run on a given `gamehost` (the committed bundle, or the packed tarball
// installed and run on the machine's Node 20) against a fresh emulator of the demo game: did-you-mean,
// the version, help within 80 columns, messages that name flags, --json on a failure, a dry run
// without connection flags, the exit codes, progress that ends on the build's totals.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type Emulator } from '../../src/emulator/index.ts'
import { GAME, NAMESPACE, TOKEN, root } from './actions.ts'
import { runGamehost, type Gamehost } from './cli.ts'
import { startTestEmulator } from './emulator.ts'
import { siteFiles, tempDir, writeTree } from './helpers.ts'

const COMMANDS = ['deploy', 'servers', 'lobby-logs', 'avatars', 'validate', 'publish', 'close', 'sweep']

/** Registers the checks; `gamehost` is called once the suite's `before` hooks have run. */
export function cliChecks(label: string, gamehost: () => Gamehost): void {
  describe(`the CLI as a newcomer meets it (${label})`, () => {
    let emulator: Emulator
    let site: string
    before(async () => {
      emulator = await startTestEmulator({ rateLimit: false })
      site = await tempDir()
      await writeTree(site, siteFiles(25))
    })
    after(() => emulator.close())

    const cli = (args: string[], env: Record<string, string> = {}) => runGamehost(gamehost(), args, env)
    const connection = () => ['--api-url', emulator.url, '--game-id', GAME]
    const withToken = { GAMEHOST_TOKEN: TOKEN }

    test('an unknown command or flag is named with the nearest known one, not the whole help', async () => {
      const command = await cli(['deploi'])
      assert.equal(command.code, 2)
      assert.equal(
        command.stderr,
        "gamehost: Unknown command deploi. Did you mean deploy?\nRun 'gamehost --help' for the commands.\n",
      )
      const far = await cli(['launch'])
      assert.equal(far.code, 2)
      assert.match(far.stderr, /^gamehost: Unknown command launch\.\n/)
      assert.doesNotMatch(far.stderr, /Did you mean|Commands:/)
      const option = await cli(['deploy', '--path', site, '--site_name', 'x'])
      assert.equal(option.code, 2)
      assert.match(
        option.stderr,
        /^gamehost deploy: Unknown option --site_name\. Did you mean --site-name\?$/m,
      )
      const before = await cli(['--bogus'])
      assert.equal(before.code, 2)
      assert.match(before.stderr, /^gamehost: Unknown option --bogus\.\n/)
      const typo = await cli(['servers', '--enviroment-id', 'x'])
      assert.match(typo.stderr, /Unknown option --enviroment-id\. Did you mean --environment-id\?/)
    })

    test('-v, --version and version print the version', async () => {
      const { version } = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as {
        version: string
      }
      for (const args of [['-v'], ['--version'], ['version']]) {
        const run = await cli(args)
        assert.equal(run.code, 0, args.join(' '))
        assert.equal(run.stdout, `gamehost ${version}\n`)
      }
    })

    test('every help is grouped and within 80 columns when not on a terminal', async () => {
      for (const args of [['--help'], ...COMMANDS.map((c) => [c, '--help'])]) {
        const run = await cli(args)
        assert.equal(run.code, 0, args.join(' '))
        const long = run.stdout.split('\n').filter((line) => line.length > 80)
        assert.deepEqual(long, [], args.join(' '))
      }
      const help = (await cli(['deploy', '--help'])).stdout
      const titles = help.split('\n').filter((line) => line.endsWith(' flags:'))
      assert.deepEqual(titles, ['Required flags:', 'Common flags:', 'Advanced flags:', 'Output flags:'])
    })

    test("messages name flags, not the action's inputs", async () => {
      const namespace = await cli(
        ['deploy', ...connection(), '--path', site, '--namespace', 'Staging'],
        withToken,
      )
      assert.equal(namespace.code, 2)
      assert.match(
        namespace.stderr,
        /^gamehost deploy: --namespace 'Staging' is not a valid name id: .*\(write --namespace staging\)$/m,
      )
      const refused = await cli(['avatars', ...connection(), '--token', 'not-a-token'])
      assert.equal(refused.code, 1)
      assert.match(refused.stderr, /check --token/)
      assert.doesNotMatch(refused.stderr, /check token\b/)
      const missing = await cli(['avatars', '--game-id', GAME], withToken)
      assert.match(missing.stderr, /^gamehost avatars: --api-url \(or GAMEHOST_API_URL\) is required/m)
      // Issue 44: the scan, the glob and the walk said `path:` and `files:` where the CLI means flags.
      const nowhere = await cli(['deploy', ...connection(), '--path', `${site}-nowhere`], withToken)
      assert.equal(nowhere.code, 2)
      assert.match(nowhere.stderr, /^gamehost deploy: --path: '.*-nowhere' does not exist/m)
      const absolute = await cli(['deploy', ...connection(), '--path', site, '--files', '/etc/*'], withToken)
      assert.match(
        absolute.stderr,
        /^gamehost deploy: --files: '\/etc\/\*' is absolute; patterns are relative to --path/m,
      )
    })

    test('--json on a failure: one document, the error beside the outputs known', async () => {
      const refused = await cli(['avatars', ...connection(), '--token', 'not-a-token', '--json'])
      assert.equal(refused.code, 1)
      const document = JSON.parse(refused.stdout) as { error: { code: string; message: string } }
      assert.equal(document.error.code, 'TOKEN_INVALID')
      assert.match(document.error.message, /check --token/)

      const usage = await cli(['servers', ...connection(), '--json'], withToken)
      assert.equal(usage.code, 2)
      assert.equal((JSON.parse(usage.stdout) as { error: { code: string } }).error.code, 'USAGE')

      // Past the local checks: the files were collected, the namespace is not the game's.
      const unknown = await cli(
        [
          'deploy',
          ...connection(),
          '--path',
          site,
          '--namespace-id',
          '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15',
          '--json',
        ],
        withToken,
      )
      assert.equal(unknown.code, 1, unknown.stderr)
      const outputs = JSON.parse(unknown.stdout) as Record<string, unknown> & {
        error: { code: string; message: string }
      }
      assert.equal(outputs['file-count'], 25)
      assert.equal(outputs['site-id'], null)
      assert.equal(outputs.error.code, 'SERVICE_STATE')
      assert.match(
        outputs.error.message,
        /^--namespace-id '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15' is not a namespace of game/,
      )
    })

    test('a dry run needs no connection flag, whichever are given', async () => {
      const before = emulator.requests.length
      for (const given of [[], ['--api-url', emulator.url], ['--game-id', GAME], connection()]) {
        const dry = await cli(['deploy', '--path', site, '--dry-run', '--json', ...given])
        assert.equal(dry.code, 0, `${given.join(' ')}: ${dry.stderr}`)
        assert.equal((JSON.parse(dry.stdout) as Record<string, unknown>)['file-count'], 25)
      }
      assert.equal(emulator.requests.length, before, 'a dry run calls nothing')
      const bad = await cli(['deploy', '--path', site, '--dry-run', '--game-id', 'g'])
      assert.equal(bad.code, 2, 'what is given is still checked')
    })

    test('exit 1 for what the service holds (no version to roll back to), 2 for bad usage only', async () => {
      const previous = await cli(
        ['publish', ...connection(), '--namespace-id', NAMESPACE, '--version-id', 'previous', '--json'],
        withToken,
      )
      assert.equal(previous.code, 1, previous.stderr)
      assert.match(
        previous.stderr,
        /^error: --version-id 'previous': namespace \S+ has had no other version published/m,
      )
      assert.equal((JSON.parse(previous.stdout) as { error: { code: string } }).error.code, 'SERVICE_STATE')
      const both = await cli(
        [
          'publish',
          ...connection(),
          '--namespace-id',
          NAMESPACE,
          '--version-id',
          'previous',
          '--from-namespace',
          'x',
        ],
        withToken,
      )
      assert.equal(both.code, 2, both.stderr)
    })

    test("the upload's progress ends on the build's totals (its files and the record)", async () => {
      const run = await cli(['deploy', ...connection(), '--path', site], withToken)
      assert.equal(run.code, 0, run.stderr)
      const progress = run.stderr.split('\n').filter((line) => line.trim().startsWith('Uploaded files '))
      assert.match(progress[progress.length - 1]!, /^ *Uploaded files 26\/26, /, run.stderr)
      assert.ok(!progress.some((line) => /Uploaded files 1\/1,/.test(line)), progress.join('\n'))
    })
  })
}
