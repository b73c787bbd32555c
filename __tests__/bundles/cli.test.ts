// The command-line client, run as a child process through its committed bundle (dist/cli/index.js),
// against the emulator.
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, readFile, readdir } from 'node:fs/promises'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Server } from '../../src/api/types.ts'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { CLI, NODE, runCli as cli } from '../support/cli.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { siteFiles, tempDir, writeTree } from '../support/helpers.ts'
import {
  CRASHED_LOBBY,
  GAME,
  NAMESPACE,
  RUNNING_LOBBY,
  TOKEN,
  actionNames,
  root,
  stagingSeed,
} from '../support/actions.ts'

const withToken = { GAMEHOST_TOKEN: TOKEN }
const { seed, servers: staging } = stagingSeed(11)

describe('gamehost CLI', () => {
  let emulator: Emulator
  let site: string
  before(async () => {
    emulator = await startTestEmulator({
      seed,
      serversPageSize: 2,
      rateLimit: false,
    })
    site = await tempDir()
    await writeTree(site, siteFiles(25, { name: 'data/level.bin', size: 150 * 1024 }))
  })
  after(() => emulator.close())

  const connection = () => ['--api-url', emulator.url, '--game-id', GAME]

  describe('deploy', () => {
    test('a dry run calls nothing: it needs no --api-url, token or --game-id', async () => {
      const before = emulator.requests.length
      const dry = await cli(['deploy', '--path', site, '--dry-run', '--json'])
      assert.equal(dry.code, 0, dry.stderr)
      assert.equal((JSON.parse(dry.stdout) as Record<string, unknown>)['file-count'], 26)
      assert.equal(emulator.requests.length, before)
      // What is given is still checked.
      const bad = await cli(['deploy', '--path', site, '--dry-run', '--api-url', 'ftp://x'])
      assert.equal(bad.code, 2, bad.stderr)
    })

    test('api-url and game-id are read from GAMEHOST_API_URL and GAMEHOST_GAME_ID; a missing one says both ways', async () => {
      const env = { ...withToken, GAMEHOST_API_URL: emulator.url, GAMEHOST_GAME_ID: GAME }
      const run = await cli(['avatars', '--json'], env)
      assert.equal(run.code, 0, run.stderr)
      const missing = await cli(['avatars'], withToken)
      assert.equal(missing.code, 2)
      assert.match(missing.stderr, /^gamehost avatars: --api-url \(or GAMEHOST_API_URL\) is required/m)
      const help = await cli(['avatars', '--help'])
      assert.match(help.stdout, /GAMEHOST_API_URL \(--api-url\)/)
      assert.match(help.stdout, /GAMEHOST_GAME_ID \(--game-id\)/)
      // The emulator's port, where the help names one, is its default.
      const deployHelp = await cli(['deploy', '--help'])
      assert.match(deployHelp.stdout, /http:\/\/localhost:8787 for the emulator/)
      assert.doesNotMatch(deployHelp.stdout, /6420/)
    })

    test('dry run and deploy give the digest, file count and size of the action', async () => {
      const inputs = { 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, path: site }
      const defaults = await actionDefaults(path.join(root, 'action.yml'))
      const action = await runAction({ entry: path.join(root, 'dist/index.js'), defaults, cwd: root, inputs })
      assert.equal(action.exitCode, 0, action.stdout)
      const actionDry = await runAction({
        entry: path.join(root, 'dist/index.js'),
        defaults,
        cwd: root,
        inputs: { ...inputs, token: '', 'dry-run': 'true' },
      })
      assert.equal(actionDry.exitCode, 0, actionDry.stdout)

      const dry = await cli(['deploy', ...connection(), '--path', site, '--dry-run', '--json'])
      assert.equal(dry.code, 0, dry.stderr)
      const planned = JSON.parse(dry.stdout) as Record<string, unknown>
      const real = await cli(['deploy', ...connection(), '--path', site, '--json'], withToken)
      assert.equal(real.code, 0, real.stderr)
      const deployed = JSON.parse(real.stdout) as Record<string, unknown>

      assert.deepEqual(Object.keys(deployed), await actionNames(path.join(root, 'action.yml'), 'outputs'))
      for (const outputs of [planned, deployed]) {
        assert.equal(outputs.digest, action.outputs.digest)
        assert.equal(outputs['file-count'], Number(action.outputs['file-count']))
        assert.equal(outputs['total-bytes'], Number(action.outputs['total-bytes']))
      }
      assert.equal(actionDry.outputs.digest, action.outputs.digest)
      assert.equal(planned['site-id'], null)
      assert.equal(deployed.skipped, false)

      const view = emulator.site(deployed['site-id'] as string)
      assert.equal(view?.completed, true)
      // The build's 26 files, and the record of the build (site-record).
      assert.equal(view.files.length, 25 + 1 + 1)
      assert.equal(view.parts.filter((p) => p.path === 'data/level.bin').length, 1, 'one PUT per file')
      assert.ok(!/::debug::/.test(real.stdout + real.stderr), 'no workflow command reaches the user')
      assert.match(real.stderr, /^> Upload$/m)
      // The progress ends on the site's totals: its 26 files and the record of the build.
      assert.match(real.stderr, /^ {2}Uploaded files 27\/27, /m)
    })

    test('the manifest goes to a private temporary folder, removed at the end, unless --manifest keeps it', async () => {
      // The CLI's own temporary folder, to see what it leaves there.
      const tmp = await tempDir()
      const plain = await cli(['deploy', ...connection(), '--path', site, '--dry-run', '--json'], {
        TMPDIR: tmp,
      })
      assert.equal(plain.code, 0, plain.stderr)
      assert.equal(
        (JSON.parse(plain.stdout) as Record<string, unknown>).manifest,
        null,
        'nothing left to point at',
      )
      assert.deepEqual(await readdir(tmp), [], 'no folder or file left in the temporary folder')
      // Nor is a path it removes printed, in the log or the report.
      const told = await cli(['deploy', ...connection(), '--path', site, '--dry-run'], { TMPDIR: tmp })
      assert.equal(told.code, 0, told.stderr)
      assert.ok(!(told.stdout + told.stderr).includes(tmp), told.stdout + told.stderr)
      assert.doesNotMatch(told.stderr, /Manifest written/)

      const keep = path.join(await tempDir(), 'manifest.json')
      const kept = await cli([
        'deploy',
        ...connection(),
        '--path',
        site,
        '--dry-run',
        '--json',
        '--manifest',
        keep,
      ])
      assert.equal(kept.code, 0, kept.stderr)
      const outputs = JSON.parse(kept.stdout) as Record<string, unknown>
      assert.equal(outputs.manifest, keep)
      const manifest = JSON.parse(await readFile(keep, 'utf8')) as { digest: string; fileCount: number }
      assert.equal(manifest.digest, outputs.digest)
      assert.equal(manifest.fileCount, 26)
    })

    test('provisions like the action and prints a readable report', async () => {
      const run = await cli(
        [
          'deploy',
          ...connection(),
          '--path',
          site,
          '--files',
          '**',
          '--files',
          '!data/**',
          '--namespace',
          'cli-preview',
          '--version-id',
          '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
          '--domain',
          'cli.preview.example.com',
          '--cdn-domain',
          emulator.url.replace('127.0.0.1', 'localhost'),
          '--lobby-count-max',
          '64',
          '--max-players',
          '16',
          '--site-name',
          'CLI preview',
        ],
        withToken,
      )
      assert.equal(run.code, 0, run.stderr)
      const namespace = emulator.namespaces(GAME).find((n) => n.nameId === 'cli-preview')
      assert.deepEqual(namespace?.domains, ['cli.preview.example.com'])
      assert.match(run.stdout, /^gamehost deploy$/m)
      assert.match(
        run.stdout,
        new RegExp(`^ {2}Namespace +cli-preview ${namespace.namespaceId} \\(created\\)$`, 'm'),
      )
      assert.match(run.stdout, /^ {2}Files +25 /m)
      assert.match(run.stdout, /^ {2}Matchmaker config +valid$/m)
      const siteId = /^ {2}Site +CLI preview (\S+)$/m.exec(run.stdout)?.[1]
      assert.equal(emulator.site(siteId ?? '')?.displayName, 'CLI preview')
    })

    test("the default site name is the action's: repository, branch, short sha (GitLab's, or git's)", async () => {
      const siteName = async (env: Record<string, string>, cwd?: string) => {
        const run = await cli(['deploy', ...connection(), '--path', site, '--dry-run'], env, cwd)
        assert.equal(run.code, 0, run.stderr)
        return /^ {2}Site +(.*) \(would be created\)$/m.exec(run.stdout)?.[1]
      }
      const gitlab = {
        CI_PROJECT_PATH: 'studio/space-game',
        CI_COMMIT_REF_NAME: 'feature-x',
        CI_COMMIT_SHA: 'abcdef0123',
      }
      assert.equal(await siteName(gitlab), 'space-game feature-x abcdef0')

      const repo = path.join(await tempDir(), 'moon-game')
      const identity = ['user.name=t', 'user.email=t@example.com', 'commit.gpgsign=false']
      const git = (...args: string[]) =>
        execFileSync('git', ['-C', repo, ...identity.flatMap((c) => ['-c', c]), ...args], {
          encoding: 'utf8',
        }).trim()
      await mkdir(repo)
      git('init', '--quiet', '--initial-branch', 'trunk')
      git('commit', '--quiet', '--allow-empty', '--message', 'first')
      assert.equal(await siteName({}, repo), `moon-game trunk ${git('rev-parse', '--short=7', 'HEAD')}`)
    })

    test('a matchmaker config the service rejects exits 1 with one line per problem', async () => {
      const run = await cli(
        [
          'deploy',
          ...connection(),
          '--namespace-id',
          NAMESPACE,
          '--lobby-count-max',
          '40000',
          '--max-players',
          '8',
        ],
        withToken,
      )
      assert.equal(run.code, 1)
      assert.match(run.stderr, /^error: lobby-count too high: lobby_count_max must be below 32768$/m)
      assert.equal(run.stdout, '')
    })

    test('a deploy with patterns writes no workflow command: stdout stays one JSON document', async () => {
      // Patterns other than the default ** go through the CLI's globber, never @actions/glob.
      const run = await cli([
        'deploy',
        ...connection(),
        '--path',
        site,
        '--files',
        '**/*',
        '--dry-run',
        '--json',
      ])
      assert.equal(run.code, 0, run.stderr)
      assert.doesNotMatch(run.stdout + run.stderr, /^::/m)
      const outputs = JSON.parse(run.stdout) as Record<string, unknown>
      assert.ok(Number(outputs['file-count']) > 0, run.stdout)
    })
  })

  describe('servers, lobby-logs, avatars, validate', () => {
    test('servers --json prints the full list, across pages', async () => {
      const run = await cli(
        [
          'servers',
          ...connection(),
          '--environment-id',
          '7a2e5c8f-1b4d-4e9a-a3c6-8d1f4b7e0c92',
          '--include-destroyed',
          '--json',
        ],
        withToken,
      )
      assert.equal(run.code, 0, run.stderr)
      const outputs = JSON.parse(run.stdout) as { servers: Server[]; count: number }
      assert.deepEqual(
        Object.keys(outputs),
        await actionNames(path.join(root, 'servers/action.yml'), 'outputs'),
      )
      assert.deepEqual(outputs.servers, staging)
      assert.equal(outputs.count, 11)
      assert.match(run.stderr, /^ {2}Page 6: 1 server \(11 in all\)$/m)
    })

    test('servers with a tag filter, as text', async () => {
      const run = await cli(
        [
          'servers',
          ...connection(),
          '--environment-id',
          '7a2e5c8f-1b4d-4e9a-a3c6-8d1f4b7e0c92',
          '--tags',
          '{"region":"us"}',
        ],
        withToken,
      )
      assert.equal(run.code, 0, run.stderr)
      const expected = staging.filter((s) => s.tags.region === 'us' && s.destroyed_at === undefined)
      for (const server of staging) assert.equal(run.stdout.includes(server.id), expected.includes(server))
      assert.match(run.stdout, new RegExp(`^ {2}Servers +${expected.length}$`, 'm'))
    })

    test('lobby-logs: a crashed lobby exits 1 with its exit code, a running one 0', async () => {
      const lobby = (id: string, ...extra: string[]) =>
        cli(
          ['lobby-logs', ...connection(), '--namespace-id', NAMESPACE, '--lobby-id', id, ...extra],
          withToken,
        )
      const crashed = await lobby(CRASHED_LOBBY.lobby_id, '--json')
      assert.equal(crashed.code, 1)
      assert.match(crashed.stderr, /^error: Lobby .* failed: it stopped with exit code 137/m)
      const outputs = JSON.parse(crashed.stdout) as Record<string, unknown>
      const { error, ...known } = outputs as { error: { code: string; message: string } }
      assert.deepEqual(known, { lobby: CRASHED_LOBBY, status: 'stopped', 'exit-code': 137, failed: true })
      assert.equal(error.code, 'FAILED')
      assert.match(error.message, /^Lobby .* failed: it stopped with exit code 137/)

      const running = await lobby(RUNNING_LOBBY.lobby_id)
      assert.equal(running.code, 0, running.stderr)
      assert.match(running.stdout, /^ {2}Status +running$/m)

      const tolerated = await lobby(CRASHED_LOBBY.lobby_id, '--no-fail-if-failed')
      assert.equal(tolerated.code, 0)
      assert.match(tolerated.stderr, /^warning: Lobby failed: .*exit code 137/m)
    })

    test('avatars lists them', async () => {
      const run = await cli(['avatars', ...connection()], withToken)
      assert.equal(run.code, 0, run.stderr)
      assert.match(run.stdout, /^gamehost avatars: 3 \(2 complete\)$/m)
      assert.match(
        run.stdout,
        /^ {2}Wizard +c5e3a7b9-\S+ +60\.0 KiB +2025-05-01T08:47:33Z +no \(uploading\) +—$/m,
      )
    })

    test('validate: the service errors and their paths, exit 1; a valid config, exit 0', async () => {
      const invalid = await cli(
        ['validate', ...connection(), '--group-display-name', 'Taken Group', '--json'],
        withToken,
      )
      assert.equal(invalid.code, 1)
      assert.deepEqual(JSON.parse(invalid.stdout), {
        errors: [
          {
            path: ['not-unique'],
            validation: 'group-display-name',
            message: 'a group with this display name already exists',
          },
        ],
        valid: false,
        error: {
          code: 'VALIDATION_FAILED',
          message:
            "The service finds the group display name 'Taken Group' invalid: not-unique (a group with this display name already exists)",
        },
      })
      assert.match(invalid.stderr, /^error: --group-display-name not unique: a group with this display name/m)
      const valid = await cli(
        [
          'validate',
          ...connection(),
          '--namespace-id',
          NAMESPACE,
          '--lobby-count-max',
          '64',
          '--max-players',
          '16',
        ],
        withToken,
      )
      assert.equal(valid.code, 0, valid.stderr)
      assert.match(valid.stdout, /^gamehost validate: valid$/m)
    })
  })

  describe('exit codes, token and help', () => {
    test('2 for bad usage, with a message naming the flag', async () => {
      const usage: Array<[string[], RegExp]> = [
        [
          ['servers', ...connection(), '--environment-id', '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15', '--bogus'],
          /Unknown option --bogus\./,
        ],
        [
          ['servers', '--game-id', GAME, '--environment-id', '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15'],
          /--api-url \(or GAMEHOST_API_URL\) is required/,
        ],
        [['servers', ...connection()], /--environment-id is required/],
        [
          [
            'servers',
            ...connection(),
            '--environment-id',
            '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15',
            '--limit',
            '0',
          ],
          /--limit '0' must be a whole/,
        ],
        [
          ['servers', ...connection(), '--environment-id', '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15', 'extra'],
          /Unexpected argument 'extra'/,
        ],
        [['validate', ...connection()], /nothing to validate/],
        [['deploy', ...connection(), '--namespace', 'Bad_Name'], /--namespace 'Bad_Name'/],
        [
          ['deploy', ...connection(), '--namespace', 'pr-1', '--version-id', 'v1'],
          /--version-id 'v1' is not an id of the service: ids are UUIDs/,
        ],
        [['launch'], /Unknown command launch\./],
        [[], /^Usage: gamehost <command>/],
      ]
      await Promise.all(
        usage.map(async ([args, message]) => {
          const run = await cli(args, withToken)
          assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`)
          assert.match(run.stderr, message)
          assert.equal(run.stdout, '')
        }),
      )
    })

    test('the token comes from GAMEHOST_TOKEN or --token, and is never required on the command line', async () => {
      const requests = emulator.requests.length
      const missing = await cli(['avatars', ...connection()])
      assert.equal(missing.code, 2)
      assert.match(
        missing.stderr,
        /no token: set the GAMEHOST_TOKEN environment variable \(or pass --token\)/,
      )
      const deployWithout = await cli(['deploy', ...connection(), '--path', site])
      assert.equal(deployWithout.code, 2)
      assert.match(deployWithout.stderr, /GAMEHOST_TOKEN/)
      assert.equal(emulator.requests.length, requests, 'no call without a token')

      assert.equal((await cli(['avatars', ...connection()], withToken)).code, 0)
      assert.equal(
        (await cli(['avatars', ...connection(), '--token', TOKEN], { GAMEHOST_TOKEN: 'wrong' })).code,
        0,
      )
      const refused = await cli(['avatars', ...connection(), '--token', 'gamehost-other-token'], withToken)
      assert.equal(refused.code, 1)
      assert.match(refused.stderr, /^error: games\.avatars\.listGameCustomAvatars failed: 403 API_FORBIDDEN/m)
    })

    test('--help for each subcommand lists a flag for every input of its action', async () => {
      const commands: Array<[string, string]> = [
        ['deploy', 'action.yml'],
        ['servers', 'servers/action.yml'],
        ['lobby-logs', 'lobby-logs/action.yml'],
        ['avatars', 'avatars/action.yml'],
        ['validate', 'validate/action.yml'],
        ['publish', 'publish/action.yml'],
        ['sweep', 'sweep/action.yml'],
      ]
      // Only the action has a pull request to comment on, and a fork's missing secret to tolerate.
      const actionOnly = new Set(['comment', 'github-token', 'if-no-token', 'skip-unchanged', 'pull-request'])
      await Promise.all(
        commands.map(async ([command, yml]) => {
          const run = await cli([command, '--help'])
          assert.equal(run.code, 0)
          assert.ok(run.stdout.startsWith(`Usage: gamehost ${command} [flags]\n`), run.stdout)
          for (const input of await actionNames(path.join(root, yml), 'inputs')) {
            if (actionOnly.has(input)) continue
            assert.match(
              run.stdout,
              new RegExp(`--(\\[no-\\])?${input}\\b`),
              `${command} --help lists --${input}`,
            )
          }
          assert.match(run.stdout, /--json/)
          assert.match(run.stdout, /Exit codes: 0 success, 1 failure .*, 2 bad usage/)
        }),
      )
      const main = await cli(['--help'])
      assert.equal(main.code, 0)
      for (const command of [...commands.map(([c]) => c), 'emulator'])
        assert.match(main.stdout, new RegExp(`^ {2}${command} `, 'm'))
      const emulatorHelp = await cli(['emulator', '--help'])
      assert.equal(emulatorHelp.code, 0)
      assert.match(emulatorHelp.stdout, /^Usage: gamehost emulator \[options\]/)
      assert.match(emulatorHelp.stdout, /--faults <json>/)
      const badEmulatorFlag = await cli(['emulator', '--bogus'])
      assert.equal(badEmulatorFlag.code, 2)
      assert.match(badEmulatorFlag.stderr, /^gamehost emulator: /)
    })

    test('emulator --host 0.0.0.0 prints the addresses it is reachable at and warns; SIGHUP removes its temporary folder', async (t) => {
      const tmp = await tempDir()
      const child = spawn(NODE, [CLI, 'emulator', '--port', '0', '--host', '0.0.0.0'], {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: tmp },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stdout = ''
      let stderr = ''
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
      const closed = once(child, 'close') as Promise<[number | null]>
      t.after(() => void child.kill('SIGKILL'))
      child.stdout.setEncoding('utf8')
      const url = await new Promise<string>((resolve) => {
        child.stdout.on('data', (chunk: string) => {
          stdout += chunk
          const match = /^gamehost emulator listening on (http:\/\/\S+)$/m.exec(stdout)
          if (match) resolve(match[1]!)
        })
      })
      const port = new URL(url).port
      assert.equal(url, `http://127.0.0.1:${port}`, 'an address to connect to, not 0.0.0.0')
      assert.match(
        stdout,
        new RegExp(
          `^gamehost emulator listens on every address of this machine \\(0\\.0\\.0\\.0\\), port ${port}: http://127\\.0\\.0\\.1:${port}`,
          'm',
        ),
      )
      const answer = await fetch(`${url}/cloud/games/${GAME}/avatars`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      })
      assert.equal(answer.status, 200)
      assert.equal((await readdir(tmp)).length, 1, 'the emulator keeps uploaded parts in a temporary folder')
      child.kill('SIGHUP')
      const [code] = await closed
      assert.equal(code, 0, stderr)
      assert.deepEqual(await readdir(tmp), [], 'SIGHUP removed it')
      // Standard error comes on a pipe of its own: read once the process has ended.
      assert.match(
        stderr,
        /warning: listening on 0\.0\.0\.0, not on loopback: anyone on the network .* with the token/,
      )
    })

    test('emulator runs the emulator until SIGINT, and the CLI works against it', async () => {
      const child = spawn(NODE, [CLI, 'emulator', '--port', '0', '--no-rate-limit'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stdout = ''
      child.stdout.setEncoding('utf8')
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: string) => {
          stdout += chunk
          const match = /listening on (http:\/\/\S+)/.exec(stdout)
          if (match) resolve(match[1]!)
        })
        child.once('exit', () => reject(new Error(`the emulator exited: ${stdout}`)))
      })
      try {
        const run = await cli(['avatars', '--api-url', url, '--game-id', GAME, '--json'], withToken)
        assert.equal(run.code, 0, run.stderr)
        assert.equal((JSON.parse(run.stdout) as { count: number }).count, 3)
      } finally {
        child.kill('SIGINT')
      }
      const [code] = (await once(child, 'exit')) as [number | null]
      assert.equal(code, 0)
      assert.match(stdout, /^GET \/cloud\/games\/4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86\/avatars 200$/m)
    })
  })
})
