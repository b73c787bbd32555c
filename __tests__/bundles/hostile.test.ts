// Safe in a hostile world, through dist/index.js as the runner runs it: a fork's build whose file names
// carry line breaks, workflow commands and ANSI escapes; a service that answers ids of another form;
// one pull request previewed on two targets (two services, two games) under one namespace name.
import assert from 'node:assert/strict'
import { symlink } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { actionDefaults, runAction, type ActionRun } from '../../scripts/run-action.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { startGitHubStub, type GitHubStub } from '../support/github-api.ts'
import { needsAnyFileName, needsSymlinks } from '../support/platform.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
// GAMEHOST_TEST_ENTRY: another entry to run instead (a wrapper of src/actions/deploy.ts, to check before packaging).
const entry = process.env.GAMEHOST_TEST_ENTRY ?? path.join(root, 'dist/index.js')
const TOKEN = 'gamehost-demo-token'
const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const VERSION = '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53'
const OTHER_GAME = '2e7f4a9c-6b1d-4e3a-9c58-d0a3f6b2e814'
const OTHER_TOKEN = 'gamehost-other-token'
const OTHER_VERSION = '6d1b8e3f-9a2c-4d7e-8b41-5c0f3a6e9d27'
const REPO = 'studio/space-game'
const GITHUB_TOKEN = 'gh-write'
const BOT = { login: 'github-actions[bot]', type: 'Bot' as const }

/** File names a fork's build can choose: each would be a workflow command or a terminal control as it is. */
const HOSTILE_FILES = {
  'a\n::error::pwned.txt': 'a'.repeat(4000),
  'b\x1b[2K\x1b[1A\x1b[31mred\x1b[0m.txt': 'b'.repeat(3000),
  'c\r::add-mask::pwned.txt': 'c'.repeat(2000),
  'd ##[set-output name=url;]pwned.txt': 'd'.repeat(1000),
  'e\n::set-output name=site-id::pwned.txt': 'e',
}
/** Each name as the log shows it. */
const SHOWN = [
  'a\\n::error::pwned.txt',
  'b\\x1b[2K\\x1b[1A\\x1b[31mred\\x1b[0m.txt',
  'c\\r::add-mask::pwned.txt',
  'd \\x23#[set-output name=url;]pwned.txt',
  'e\\n::set-output name=site-id::pwned.txt',
]

/**
 * The lines of a step's output the runner would run as a workflow command that this action did not
 * write: any `##[name]` (the runner reads it anywhere in a line), any `::` line that is not one of
 * ours (the token's mask, groups, annotations, debug), and any command whose text starts `pwned`.
 * The runner reads stdout and stderr alike, and ends a line at CR, LF or CRLF.
 */
function foreignCommands(output: string): string[] {
  return output.split(/\r\n|\r|\n/).filter((raw) => {
    const line = raw.trimStart()
    if (/##\[[^\]]*\]/.test(line)) return true
    if (!line.startsWith('::')) return false
    if ([TOKEN, OTHER_TOKEN, GITHUB_TOKEN].some((secret) => line === `::add-mask::${secret}`)) return false
    if (/^::[\w-]*( [^:]*)?::pwned/.test(line)) return true
    return !/^::(group|endgroup|warning|error|notice|debug)( [^:]*)?::/.test(line)
  })
}

function assertInert(run: ActionRun): void {
  const output = run.stdout + '\n' + run.stderr
  assert.deepEqual(foreignCommands(output), [], output)
  assert.ok(!output.includes('\x1b'), 'no escape sequence reaches the log')
}

describe('dist/index.js in a hostile world', () => {
  let defaults: Record<string, string>
  before(async () => {
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })

  describe("a fork's build with hostile file names", { skip: needsAnyFileName || needsSymlinks }, () => {
    let emulator: Emulator
    let site: string
    before(async () => {
      // The first store PUT never gets an answer: it is aborted after request-timeout and retried.
      emulator = await startTestEmulator({ faults: { putStallCount: 1 } })
      site = await tempDir()
      await writeTree(site, HOSTILE_FILES)
      const outside = await tempDir()
      await writeTree(outside, { secret: 'x' })
      await symlink(path.join(outside, 'secret'), path.join(site, 'f\n::add-mask::pwned-link'))
    })
    after(() => emulator.close())

    test('deploys them; the retry, the warnings, the summary show each name as text on its line', async () => {
      const run = await runAction({
        entry,
        defaults,
        cwd: root,
        inputs: {
          'api-url': emulator.url,
          'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
          token: TOKEN,
          'game-id': GAME,
          path: site,
          namespace: 'hostile-files',
          'require-index': 'false', // hostile names only, no page
          'version-id': VERSION,
          concurrency: '1',
          'request-timeout': '1',
        },
      })
      assert.equal(run.exitCode, 0, run.stdout + run.stderr)
      assertInert(run)

      assert.equal(emulator.faults.putStalls, 1, 'one PUT stalled')
      const retry = run.stdout.split('\n').filter((line) => /retry 1 of \d+/.test(line))
      assert.equal(retry.length, 1, run.stdout)
      assert.ok(
        SHOWN.some((name) => retry[0]!.includes(`Upload of ${name}`)),
        `the retry names the file as text: ${retry[0]}`,
      )
      assert.ok(
        run.stdout.includes(
          '::warning::Skipping f\\n::add-mask::pwned-link: it is a link that leads outside path',
        ),
        run.stdout,
      )

      // The files themselves are uploaded under their names, byte for byte.
      const siteId = run.outputs['site-id']!
      assert.match(siteId, /^[0-9a-f-]{36}$/)
      const uploaded = emulator.site(siteId)!.files.map((file) => file.path)
      // The files, and the record of the build (site-record).
      assert.deepEqual(uploaded.sort(), ['.well-known/gamehost.json', ...Object.keys(HOSTILE_FILES)].sort())
      for (const [name, content] of Object.entries(HOSTILE_FILES))
        assert.equal((await emulator.readUploadedFile(siteId, name)).toString(), content, name)

      // The job summary: each block one line of HTML, the names escaped in it.
      for (const line of run.summary.split('\n').filter(Boolean))
        assert.match(line, /^<(h2|h3|table|p)>.*<\/(h2|h3|table|p)>$/, line)
      assert.ok(run.summary.includes('<code>a\\n::error::pwned.txt</code>'), run.summary)
      assert.ok(run.summary.includes('<code>b\\x1b[2K\\x1b[1A\\x1b[31mred\\x1b[0m.txt</code>'), run.summary)
      assert.ok(!run.summary.includes('\x1b'))
    })
  })

  describe('a service that answers ids of another form', () => {
    let emulator: Emulator
    let proxy: Server
    let proxyUrl = ''
    let site: string
    /** The answers rewritten: `METHOD path-pattern` -> field -> value. */
    let rewrite: { method: string; path: RegExp; field: string; value: unknown } | undefined
    before(async () => {
      emulator = await startTestEmulator()
      // The service, as a stand-in between the action and the emulator that changes one field of one answer.
      proxy = createServer((request, response) => {
        void forward(request).then(
          ({ status, headers, body }) => {
            response.writeHead(status, headers)
            response.end(body)
          },
          (error: unknown) => {
            console.error(error)
            response.writeHead(502)
            response.end(String(error))
          },
        )
      })
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
      proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
      site = await tempDir()
      await writeTree(site, { 'index.html': '<!doctype html><title>game</title>' })
    })
    after(async () => {
      proxy.closeAllConnections()
      await new Promise<void>((resolve) => proxy.close(() => resolve()))
      await emulator.close()
    })

    async function forward(request: IncomingMessage) {
      const chunks: Buffer[] = []
      for await (const chunk of request) chunks.push(chunk as Buffer)
      const headers: Record<string, string> = {}
      for (const name of ['authorization', 'content-type', 'accept'])
        if (typeof request.headers[name] === 'string') headers[name] = request.headers[name]
      const upstream = await fetch(emulator.url + request.url, {
        method: request.method,
        headers,
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      })
      let body = Buffer.from(await upstream.arrayBuffer())
      const pathname = new URL(request.url ?? '/', proxyUrl).pathname
      if (upstream.ok && rewrite && request.method === rewrite.method && rewrite.path.test(pathname)) {
        const json = JSON.parse(body.toString()) as Record<string, unknown>
        json[rewrite.field] = rewrite.value
        body = Buffer.from(JSON.stringify(json))
      }
      const out: Record<string, string> = { 'content-type': 'application/json' }
      for (const [name, value] of upstream.headers) if (name.startsWith('rvt-')) out[name] = value
      return { status: upstream.status, headers: out, body }
    }

    const cases = [
      {
        what: 'a site id holding a line break and a warning command',
        rewrite: { method: 'POST', path: /\/cdn\/sites$/, field: 'site_id', value: 'x\n::warning::pwned' },
        operation: 'games.cdn.createGameCdnSite',
        problem: 'site_id is string "x\\n::warning::pwned", not an id (a UUID)',
        namespace: 'hostile-site-id',
      },
      {
        what: 'a namespace id that is a name',
        rewrite: { method: 'POST', path: /\/namespaces$/, field: 'namespace_id', value: 'pr-1' },
        operation: 'games.namespaces.createGameNamespace',
        problem: 'namespace_id is string "pr-1", not an id (a UUID)',
        namespace: 'hostile-ns-id',
      },
    ]
    for (const kase of cases) {
      test(`${kase.what} fails the step as an unexpected answer naming the field`, async () => {
        rewrite = kase.rewrite
        const run = await runAction({
          entry,
          defaults,
          cwd: root,
          inputs: {
            'api-url': proxyUrl,
            token: TOKEN,
            'game-id': GAME,
            path: site,
            namespace: kase.namespace,
            'version-id': VERSION,
          },
        })
        assert.equal(run.exitCode, 1, run.stdout + run.stderr)
        assertInert(run)
        const failure = run.stdout.split('\n').filter((line) => line.startsWith('::error::'))
        assert.ok(
          failure.some((line) =>
            line.startsWith(
              `::error::${kase.operation}: the service's answer is not what the operation promises: ${kase.problem}`,
            ),
          ),
          run.stdout,
        )
        for (const [name, value] of Object.entries(run.outputs))
          assert.ok(!value.includes(String(kase.rewrite.value)), `output ${name} does not hold the id`)
        assert.ok(!run.summary.includes('::warning::pwned\n'))
      })
    }
  })

  describe('one pull request previewed on two services and two games under one namespace name', () => {
    let production: Emulator
    let staging: Emulator
    let github: GitHubStub
    let site: string
    before(async () => {
      production = await startTestEmulator()
      staging = await startTestEmulator()
      github = await startGitHubStub({ [GITHUB_TOKEN]: { user: BOT, canComment: true } })
      site = await tempDir()
      await writeTree(site, { 'index.html': '<!doctype html><title>game</title>', 'game.js': 'run()' })
    })
    after(async () => {
      await production.close()
      await staging.close()
      await github.close()
    })

    const ISSUE = 31
    const preview = (emulator: Emulator, game: { id: string; token: string; version: string }) =>
      runAction({
        entry,
        defaults,
        cwd: root,
        event: {
          name: 'pull_request',
          payload: {
            action: 'synchronize',
            number: ISSUE,
            pull_request: {
              number: ISSUE,
              head: { sha: 'abcdef1234567', repo: { full_name: REPO } },
              base: { repo: { full_name: REPO } },
            },
          },
        },
        githubToken: GITHUB_TOKEN,
        env: { GITHUB_API_URL: github.url, GITHUB_REF: `refs/pull/${ISSUE}/merge` },
        inputs: {
          'api-url': emulator.url,
          'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
          token: game.token,
          'game-id': game.id,
          path: site,
          namespace: `pr-${ISSUE}`,
          'version-id': game.version,
        },
      })
    const comments = () => github.comments(REPO, ISSUE).filter((c) => c.body.includes('gamehost-preview'))
    const ok = (run: ActionRun) => {
      assert.equal(run.exitCode, 0, run.stdout + run.stderr)
      assertInert(run)
    }

    test('each target keeps its own comment and its own site: none reuses another one', async () => {
      const demo = { id: GAME, token: TOKEN, version: VERSION }
      const other = { id: OTHER_GAME, token: OTHER_TOKEN, version: OTHER_VERSION }
      const targets = [
        { name: 'production service, demo game', emulator: production, game: demo },
        { name: 'staging service, demo game', emulator: staging, game: demo },
        { name: 'production service, other game', emulator: production, game: other },
      ]
      const sites: string[] = []
      for (const target of targets) {
        const run = await preview(target.emulator, target.game)
        ok(run)
        assert.equal(run.outputs.skipped, 'false', `${target.name}: a first deploy of its own`)
        const siteId = run.outputs['site-id']!
        assert.ok(!sites.includes(siteId), target.name)
        const view = target.emulator.site(siteId)
        assert.ok(view?.completed, `${target.name}: its site is on its service`)
        assert.ok(
          target.emulator.sites(target.game.id).some((s) => s.siteId === siteId),
          `${target.name}: its site is of its game`,
        )
        sites.push(siteId)
      }
      assert.equal(comments().length, 3, 'a comment per target')
      for (const siteId of sites) assert.equal(comments().filter((c) => c.body.includes(siteId)).length, 1)

      // Unchanged: each target reuses its own site, found in its own comment.
      for (const [i, target] of targets.entries()) {
        const run = await preview(target.emulator, target.game)
        ok(run)
        assert.equal(run.outputs.skipped, 'true', target.name)
        assert.equal(run.outputs['site-id'], sites[i], target.name)
      }
      assert.equal(comments().length, 3)
    })
  })
})
