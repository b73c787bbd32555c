// The deploy's record on the site, through dist/index.js against the emulator at its defaults, with
// the GitHub stand-in answering compare: an older commit's release run leaves production on the newer
// build and says so; a pull request that grows game.wasm shows its growth in the comment.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fetchLocally, startEmulator, type Emulator } from '../../src/emulator/index.ts'
import { actionDefaults, runAction, type ActionRun } from '../../scripts/run-action.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { startGitHubStub, type GitHubStub } from '../support/github-api.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'

const REPO = 'studio/space-game'
const MiB = 1024 * 1024
const OLD = 'a'.repeat(40)
const NEW = 'b'.repeat(40)
const OTHER_BRANCH = 'c'.repeat(40)

describe('the record on the site, through dist/index.js', () => {
  let emulator: Emulator
  let github: GitHubStub
  let defaults: Record<string, string>
  before(async () => {
    emulator = await startEmulator({ rateLimit: false })
    github = await startGitHubStub({
      'gh-write': { user: { login: 'github-actions[bot]', type: 'Bot' }, canComment: true },
    })
    github.addHistory(REPO, [OLD, NEW])
    github.addHistory(REPO, [OTHER_BRANCH])
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(async () => {
    await emulator.close()
    await github.close()
  })

  const build = async (title: string, wasm: Buffer) => {
    const dir = await tempDir()
    await writeTree(dir, { 'index.html': `<title>${title}</title>`, 'Build/game.wasm': wasm })
    return dir
  }
  const connection = () => ({ 'api-url': emulator.url, token: TOKEN, 'game-id': GAME })
  const release = (sha: string, inputs: Record<string, string>) =>
    runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      githubToken: 'gh-write',
      env: { GITHUB_API_URL: github.url, GITHUB_SHA: sha, GITHUB_REF: 'refs/heads/main' },
      inputs: { ...connection(), ...inputs },
    })
  const pullRequest = (number: number, sha: string, inputs: Record<string, string>) =>
    runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      githubToken: 'gh-write',
      event: {
        name: 'pull_request',
        payload: {
          number,
          pull_request: {
            number,
            head: { sha, repo: { full_name: REPO } },
            base: { repo: { full_name: REPO } },
          },
        },
      },
      env: { GITHUB_API_URL: github.url, GITHUB_REF: `refs/pull/${number}/merge` },
      inputs: { ...connection(), ...inputs },
    })
  const ok = (run: ActionRun) => assert.equal(run.exitCode, 0, run.stdout)
  const hostOf = (nameId: string) => `http://demo-game--${nameId}.localhost:${new URL(emulator.url).port}/`

  test('a release run of an older commit leaves the namespace on the newer build, says so, and stays green', async () => {
    const newer = await release(NEW, {
      path: await build('newer', Buffer.from('\0asm newer')),
      namespace: 'rel',
    })
    ok(newer)
    const url = hostOf('rel')
    assert.equal(newer.outputs.verified, 'true')
    // The record is served, and names the commit, the digest and each file.
    const record = JSON.parse((await fetchLocally(`${url}.well-known/gamehost.json`)).text) as {
      commit: string
      digest: string
      files: Array<{ path: string }>
    }
    assert.equal(record.commit, NEW)
    assert.equal(record.digest, newer.outputs.digest)
    assert.deepEqual(
      record.files.map((f) => f.path),
      ['Build/game.wasm', 'index.html'],
    )
    assert.equal(newer.outputs['file-count'], '2', 'the outputs describe the build, not the record')
    const liveVersion = emulator.namespaces(GAME).find((n) => n.nameId === 'rel')!.versionId
    const sites = emulator.sites(GAME).length

    const older = await release(OLD, {
      path: await build('older', Buffer.from('\0asm older')),
      namespace: 'rel',
    })
    ok(older)
    assert.equal(older.outputs.skipped, 'true')
    assert.equal(older.outputs.url, url, 'url: where the newer build is still served')
    assert.equal(older.outputs['version-id'], '')
    assert.equal(older.outputs['site-id'], '')
    assert.match(
      older.stdout,
      /Namespace rel serves commit bbbbbbb, newer than this run's aaaaaaa: nothing was published, it still serves bbbbbbb/,
    )
    assert.match(older.summary, /an older commit, nothing published/)
    assert.match(older.summary, /newer than this run(&#39;|')s aaaaaaa/)
    assert.equal(emulator.namespaces(GAME).find((n) => n.nameId === 'rel')!.versionId, liveVersion)
    assert.equal(emulator.sites(GAME).length, sites, 'no site was created')
    assert.equal((await fetchLocally(url)).text, '<title>newer</title>')
    assert.ok(
      github.requests.some((r) => r.path === `/repos/${REPO}/compare/${NEW}...${OLD}` && r.status === 200),
      JSON.stringify(github.requests),
    )

    // Another branch's commit is published as before; allow-older publishes an older one on purpose.
    const diverged = await release(OTHER_BRANCH, {
      path: await build('other branch', Buffer.from('\0asm other')),
      namespace: 'rel',
    })
    ok(diverged)
    assert.equal(diverged.outputs.skipped, 'false')
    assert.equal((await fetchLocally(url)).text, '<title>other branch</title>')
    const forced = await release(OLD, {
      path: await build('older', Buffer.from('\0asm older')),
      namespace: 'rel',
      'allow-older': 'true',
    })
    ok(forced)
    assert.equal(forced.outputs.verified, 'true')
    assert.equal((await fetchLocally(url)).text, '<title>older</title>')
  })

  test('a pull request that grows game.wasm shows its growth in the comment and the summary', async () => {
    ok(
      await release(NEW, {
        path: await build('prod', Buffer.concat([Buffer.from('\0asm'), randomBytes(1 * MiB)])),
        namespace: 'prod',
      }),
    )
    const grown = Buffer.concat([Buffer.from('\0asm'), randomBytes(3 * MiB)])
    const run = await pullRequest(51, 'd'.repeat(40), {
      path: await build('grown', grown),
      namespace: 'pr-51',
    })
    ok(run)
    const [comment] = github.comments(REPO, 51)
    assert.ok(comment, 'the preview comment')
    assert.match(comment.body, /\*\*Size\*\* compared with `prod` \(`bbbbbbb`\)/)
    assert.match(
      comment.body,
      /\| `Build\/game\.wasm` \| 1\\\.0 MiB \| 3\\\.0 MiB \| \\\+2\\\.0 MiB \\\(\\\+200\\\.0\\%\\\) \|/,
    )
    assert.match(run.summary, /Size compared with prod/)
    assert.match(run.stdout, /Compared with what prod serves: Total 1\.0 MiB → 3\.0 MiB: \+2\.0 MiB/)
  })
})
