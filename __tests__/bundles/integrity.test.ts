// The bytes published are the bytes hashed, through dist/index.js and dist/cli/index.js: a file
// rewritten in place with the same size and modification time (as tar, cp -p and rsync -t leave
// files) while the deploy uploads it fails the run naming it, and nothing is completed or published.
// The rewrite is made by a stand-in in front of the emulator at a step of the deploy it sees (a part
// received whole, the site's creation), so the verdict never depends on timing.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile, stat, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'
import { startGitHubStub, type GitHubStub } from '../support/github-api.ts'
import { startServiceProxy, type ProxyHooks } from '../support/service-proxy.ts'
import { siteFiles, tempDir, writeTree } from '../support/helpers.ts'

const VERSION = '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53'
const REPO = 'studio/space-game'
const BOT = { login: 'github-actions[bot]', type: 'Bot' as const }
const PART = 64 * 1024
// GAMEHOST_TEST_ENTRY: another entry to run instead (an older build, to see it publish the rewrite).
const ENTRY = process.env.GAMEHOST_TEST_ENTRY ?? path.join(root, 'dist/index.js')
/** The files' time, a whole second: set back exactly after a rewrite, as tar and cp -p do. */
const WHEN = new Date('2026-01-02T03:04:05Z')

async function writeSite(site: string, files: Record<string, string | number>): Promise<void> {
  const written = await writeTree(site, files)
  for (const name of written.keys()) await utimes(path.join(site, name), WHEN, WHEN)
}

/** Every byte of `file` flipped, its size and time kept: a change only its bytes show. */
async function rewriteInPlace(file: string): Promise<void> {
  const before = await stat(file)
  const bytes = await readFile(file)
  for (let i = 0; i < bytes.length; i++) bytes[i] = bytes[i]! ^ 0xff
  await writeFile(file, bytes)
  await utimes(file, WHEN, WHEN)
  const now = await stat(file)
  assert.equal(now.size, before.size)
  assert.equal(now.mtimeMs, before.mtimeMs)
}

/** Rewrites `file` once, when the first part of `name` has been received whole (the part is sent as it was). */
function rewriteAtFirstPart(file: string, name: string): ProxyHooks & { done: () => boolean } {
  let rewritten = false
  return {
    done: () => rewritten,
    put: async (url) => {
      if (rewritten || !url.includes(`/${name}?`) || !/[?&]partNumber=1(&|$)/.test(url)) return
      rewritten = true
      await rewriteInPlace(file)
    },
  }
}

describe('a file rewritten with the same size and time while it uploads', { timeout: 120_000 }, () => {
  let emulator: Emulator
  let defaults: Record<string, string>
  before(async () => {
    // Small parts, so that a site of test size has a file in several parts.
    emulator = await startTestEmulator({ rateLimit: false, multipartThreshold: PART, partSize: PART })
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(() => emulator.close())

  const siteWithBigFile = async () => {
    const site = await tempDir()
    await writeSite(site, siteFiles(8, { name: 'big.bin', size: 4 * PART + 1000 }))
    return site
  }
  const completedSites = () => emulator.sites(GAME).filter((s) => s.completed).length

  test('in parts, through dist/index.js: the run fails naming it, nothing is completed or published', async () => {
    const site = await siteWithBigFile()
    const hooks = rewriteAtFirstPart(path.join(site, 'big.bin'), 'big.bin')
    const proxy = await startServiceProxy(emulator, hooks)
    after(() => proxy.close())
    const completed = completedSites()
    const run = await runAction({
      entry: ENTRY,
      defaults,
      cwd: root,
      inputs: {
        'api-url': proxy.url,
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
        token: TOKEN,
        'game-id': GAME,
        path: site,
        namespace: 'rewritten-parts',
        'version-id': VERSION,
      },
    })
    assert.ok(hooks.done(), 'the file was rewritten during the upload')
    assert.equal(run.exitCode, 1, run.stdout + run.stderr)
    assert.match(run.stdout, /::error::.*big\.bin changed after it was scanned/)
    assert.equal(completedSites(), completed, 'no site was completed')
    const namespace = emulator.namespaces(GAME).find((n) => n.nameId === 'rewritten-parts')
    assert.equal(namespace?.liveVersionId, undefined, 'nothing was published')
    assert.ok(!run.outputs.digest, 'no digest output')
  })

  test('in parts, through dist/cli/index.js: the run fails naming it, nothing is completed', async () => {
    const site = await siteWithBigFile()
    const hooks = rewriteAtFirstPart(path.join(site, 'big.bin'), 'big.bin')
    const proxy = await startServiceProxy(emulator, hooks)
    after(() => proxy.close())
    const completed = completedSites()
    const child = spawn(
      process.execPath,
      [
        path.join(root, 'dist/cli/index.js'),
        'deploy',
        '--api-url',
        proxy.url,
        '--game-id',
        GAME,
        '--path',
        site,
      ],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', GAMEHOST_TOKEN: TOKEN },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    const [code] = (await once(child, 'close')) as [number | null]
    assert.ok(hooks.done(), 'the file was rewritten during the upload')
    assert.notEqual(code, 0, output)
    assert.match(output, /big\.bin changed after it was scanned/)
    assert.equal(completedSites(), completed, 'no site was completed')
  })

  describe('on a pull request with skip-unchanged (hashed before the upload)', () => {
    let github: GitHubStub
    before(async () => {
      github = await startGitHubStub({ 'gh-write': { user: BOT, canComment: true } })
    })
    after(() => github.close())

    test('rewritten after it was hashed, before it is sent: the run fails naming it, the preview keeps its build', async () => {
      const site = await tempDir()
      await writeSite(site, siteFiles(12, { name: 'big.bin', size: 4 * PART + 1000 }))
      let rewrite: string | undefined
      const proxy = await startServiceProxy(emulator, {
        // The site is created once the files were hashed and compared, before any is read to be sent.
        api: async (method, url) => {
          if (method !== 'POST' || !/\/cdn\/sites$/.test(url) || !rewrite) return
          const file = rewrite
          rewrite = undefined
          await rewriteInPlace(file)
        },
      })
      after(() => proxy.close())
      const preview = (sha: string) =>
        runAction({
          entry: ENTRY,
          defaults,
          cwd: root,
          event: {
            name: 'pull_request',
            payload: {
              action: 'synchronize',
              number: 41,
              pull_request: {
                number: 41,
                head: { sha, repo: { full_name: REPO } },
                base: { repo: { full_name: REPO } },
              },
            },
          },
          githubToken: 'gh-write',
          env: { GITHUB_API_URL: github.url, GITHUB_REF: 'refs/pull/41/merge' },
          inputs: {
            'api-url': proxy.url,
            'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
            token: TOKEN,
            'game-id': GAME,
            path: site,
            namespace: 'pr-41',
            'version-id': VERSION,
            'skip-unchanged': 'true',
          },
        })
      const first = await preview('aaaaaaa1111111')
      assert.equal(first.exitCode, 0, first.stdout + first.stderr)
      const live = emulator.namespaces(GAME).find((n) => n.nameId === 'pr-41')!.liveVersionId
      assert.ok(live)

      // A new build (so that it is hashed first, to compare with the preview's), then one file of it
      // rewritten between its hashing and its upload; another in parts too.
      await writeFile(path.join(site, 'index.html'), '<!doctype html><title>second</title>')
      await utimes(path.join(site, 'index.html'), WHEN, WHEN)
      for (const name of ['game.js', 'big.bin']) {
        rewrite = path.join(site, name)
        const completed = completedSites()
        const second = await preview('bbbbbbb2222222')
        assert.equal(rewrite, undefined, 'the file was rewritten')
        assert.equal(second.exitCode, 1, second.stdout + second.stderr)
        assert.match(
          second.stdout,
          new RegExp(
            `::error::.*${name.replace('.', '\\.')} changed after it was scanned: the bytes sent are not the ones hashed`,
          ),
        )
        assert.equal(completedSites(), completed, 'no site was completed')
        const namespace = emulator.namespaces(GAME).find((n) => n.nameId === 'pr-41')!
        assert.equal(namespace.liveVersionId, live, 'the preview keeps the build it had')
      }
    })
  })
})
