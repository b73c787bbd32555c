// Issue 47, "a release that matches a reviewed build uploads nothing", through dist/index.js and the
// CLI's bundle against the emulator at its defaults: the same build deployed as a release after its
// preview makes no site and no PUT, is served byte-exact, and the summary holds the proof; a build of
// the same sizes but other bytes uploads and says why.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { startEmulator, type Emulator } from '../../src/emulator/index.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { runCli } from '../support/cli.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { startGitHubStub, type GitHubStub } from '../support/github-api.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'
import { bytesAt, writesDuring } from '../support/emulator.ts'

const REPO = 'studio/space-game'
const MiB = 1024 * 1024
const HEAD = 'd'.repeat(40)
const MERGED = 'e'.repeat(40)

describe('a release of the reviewed build uploads nothing, through dist/', () => {
  let emulator: Emulator
  let github: GitHubStub
  let defaults: Record<string, string>
  // A Unity-like build: its .wasm over 5 MiB is a multipart upload when it is uploaded at all.
  const files = {
    'index.html': '<!doctype html><title>space game</title>',
    'Build/game.wasm': Buffer.concat([Buffer.from('\0asm'), randomBytes(6 * MiB)]),
    'Build/game.data': randomBytes(300 * 1024),
  }
  before(async () => {
    emulator = await startEmulator({ rateLimit: false })
    github = await startGitHubStub({
      'gh-write': { user: { login: 'github-actions[bot]', type: 'Bot' }, canComment: true },
    })
    github.addHistory(REPO, [HEAD, MERGED])
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(async () => {
    await emulator.close()
    await github.close()
  })

  const build = async (overrides: Record<string, Buffer | string> = {}) => {
    const dir = await tempDir()
    await writeTree(dir, { ...files, ...overrides })
    return dir
  }
  const connection = () => ({ 'api-url': emulator.url, token: TOKEN, 'game-id': GAME })
  const preview = (number: number, dir: string) =>
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
            head: { sha: HEAD, repo: { full_name: REPO } },
            base: { repo: { full_name: REPO } },
          },
        },
      },
      env: { GITHUB_API_URL: github.url, GITHUB_REF: `refs/pull/${number}/merge` },
      inputs: { ...connection(), path: dir, namespace: `pr-${number}` },
    })
  const release = (namespace: string, dir: string) =>
    runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      githubToken: 'gh-write',
      env: { GITHUB_API_URL: github.url, GITHUB_SHA: MERGED, GITHUB_REF: 'refs/heads/main' },
      inputs: { ...connection(), path: dir, namespace },
    })
  const counted = <T>(fn: () => Promise<T>) => writesDuring(emulator, fn)
  const servedExactly = async (url: string) => {
    for (const [file, bytes] of Object.entries(files)) {
      const served = await bytesAt(`${url}${file}`)
      assert.equal(served.status, 200, file)
      assert.ok(served.body.equals(Buffer.from(bytes)), `${file} is served byte-exact`)
    }
  }

  test('the same build deployed as a release after its preview: 0 PUTs, served byte-exact, the proof in the summary; then by the CLI', async () => {
    const dir = await build()
    const reviewed = await counted(() => preview(12, dir))
    assert.equal(reviewed.value.exitCode, 0, reviewed.value.stdout)
    assert.ok(reviewed.puts > 3, `the preview uploads its files (${reviewed.puts} PUTs)`)
    const { digest } = reviewed.value.outputs
    const previewSite = reviewed.value.outputs['site-id']

    const shipped = await counted(() => release('prod', dir))
    const run = shipped.value
    assert.equal(run.exitCode, 0, run.stdout)
    assert.equal(shipped.puts, 0)
    assert.equal(shipped.sites, 0)
    assert.equal(run.outputs['reused-from'], 'pr-12')
    assert.equal(run.outputs['site-id'], previewSite)
    assert.equal(run.outputs.digest, digest)
    assert.equal(run.outputs['upload-id'], '')
    assert.equal(run.outputs.verified, 'true')
    assert.ok(run.summary.includes(`The bytes reviewed in pr-12 (${digest})`), run.summary)
    assert.match(run.summary, /0 bytes uploaded/)
    assert.match(
      run.stdout,
      new RegExp(`Reused site ${previewSite}: the bytes reviewed in pr-12 \\(${digest}\\)`),
    )
    await servedExactly(run.outputs.url!)

    // The CLI, as a user runs it from a clone: the same proof, as text and as --json.
    const cliRun = await counted(() =>
      runCli(['deploy', '--path', dir, '--namespace', 'qa', '--json'], {
        GAMEHOST_TOKEN: TOKEN,
        GAMEHOST_API_URL: emulator.url,
        GAMEHOST_GAME_ID: GAME,
      }),
    )
    assert.equal(cliRun.value.code, 0, cliRun.value.stderr)
    assert.equal(cliRun.puts, 0)
    assert.equal(cliRun.sites, 0)
    const json = JSON.parse(cliRun.value.stdout) as Record<string, unknown>
    assert.equal(json['reused-from'], 'pr-12', 'the newest namespace that serves it')
    assert.equal(json['site-id'], previewSite)
    assert.ok(cliRun.value.stderr.includes(`the bytes reviewed in pr-12 (${digest})`), cliRun.value.stderr)
    await servedExactly(String(json.url))
  })

  test('a build of the same sizes but other bytes uploads, and says why no reviewed build matched', async () => {
    const rebuilt = Buffer.from(files['Build/game.data'])
    rebuilt[0] = rebuilt[0]! ^ 0xff
    const dir = await build({ 'Build/game.data': rebuilt })
    const made = await counted(() => release('staging', dir))
    assert.equal(made.value.exitCode, 0, made.value.stdout)
    assert.equal(made.sites, 1)
    assert.ok(made.puts > 3, `${made.puts} PUTs`)
    assert.equal(made.value.outputs['reused-from'], '')
    assert.match(
      made.value.summary,
      /none is this one, so the files were uploaded: \S+ serves 3 files and 6\.3 MiB too, but its digest is sha256:\w+, not sha256:\w+: a file differs \(Build\/game\.data\), so it is another build, or one that is not byte-reproducible/,
    )
  })
})
