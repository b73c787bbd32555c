// Live means seen live, through dist/index.js against the emulator at its defaults, which are the real
// service's at its worst: a new namespace serves nothing until a publish, a publish reaches the host
// 3 s later, a custom domain starts pending, files of 5 MiB or more are multipart, the CDN's page layer
// rewrites the pages' headers, and the CDN domain is the service's own (GET /cloud/bootstrap).
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fetchLocally, startEmulator, type Emulator } from '../../src/emulator/index.ts'
import { actionDefaults, runAction, type ActionRun } from '../../scripts/run-action.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { startGitHubStub, type GitHubStub } from '../support/github-api.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'
import { bytesAt } from '../support/emulator.ts'

const REPO = 'studio/space-game'
const MiB = 1024 * 1024

describe('live at the emulator defaults, through dist/index.js', () => {
  let emulator: Emulator
  let github: GitHubStub
  let defaults: Record<string, string>
  before(async () => {
    emulator = await startEmulator({ rateLimit: false })
    github = await startGitHubStub({
      'gh-write': { user: { login: 'github-actions[bot]', type: 'Bot' }, canComment: true },
    })
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(async () => {
    await emulator.close()
    await github.close()
  })

  const build = async (title: string, wasm = Buffer.from(`\0asm ${title}`)) => {
    const dir = await tempDir()
    await writeTree(dir, { 'index.html': `<title>${title}</title>`, 'Build/game.wasm': wasm })
    return dir
  }
  const pullRequest = (number: number, sha: string) => ({
    name: 'pull_request',
    payload: {
      number,
      pull_request: {
        number,
        head: { sha, repo: { full_name: REPO } },
        base: { repo: { full_name: REPO } },
      },
    },
  })
  const deploy = (inputs: Record<string, string>, number: number, sha: string, on = emulator) =>
    runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      githubToken: 'gh-write',
      event: pullRequest(number, sha),
      env: { GITHUB_API_URL: github.url, GITHUB_REF: `refs/pull/${number}/merge` },
      // No cdn-domain: the URL comes from the service.
      inputs: { 'api-url': on.url, token: TOKEN, 'game-id': GAME, ...inputs },
    })
  const ok = (run: ActionRun) => assert.equal(run.exitCode, 0, run.stdout)

  test("a pull request's first deploy, with a 12 MiB wasm, is served at url when the run ends, and so is its next push", async () => {
    const wasm = Buffer.concat([Buffer.from('\0asm'), randomBytes(12 * MiB)])
    const first = await deploy(
      { path: await build('first push', wasm), namespace: 'pr-41' },
      41,
      'a'.repeat(40),
    )
    ok(first)
    const port = new URL(emulator.url).port
    const url = `http://demo-game--pr-41.localhost:${port}/`
    assert.equal(first.outputs.url, url, 'the namespace host under the CDN domain the service names')
    assert.equal(first.outputs.verified, 'true')
    assert.match(
      first.stdout,
      /^Namespaces are served under http:\/\/localhost:\d+ \(the service's CDN domain/m,
    )
    assert.match(first.stdout, new RegExp(`^Live at ${url}: seen after \\d+\\.\\d s \\(\\d+ checks?\\)`, 'm'))
    // Served as the run ends, with no wait of ours: the page, and the wasm byte for byte as wasm.
    assert.equal((await fetchLocally(url)).text, '<title>first push</title>')
    const served = await bytesAt(`${url}Build/game.wasm`)
    assert.equal(served.status, 200)
    assert.equal(served.headers['content-type'], 'application/wasm')
    assert.ok(served.body.equals(wasm), 'the wasm is served byte for byte')
    // It went up as a multipart upload's part (v24.6: from 5 MiB), not as one PutObject.
    const puts = emulator.requests.filter((r) => r.method === 'PUT' && r.path.includes('Build/game.wasm'))
    assert.ok(puts.length > 0 && puts.every((r) => r.partNumber === 1), JSON.stringify(puts))
    // The namespace was created on its base version, then the new one published: history records it.
    const namespace = emulator.namespaces(GAME).find((n) => n.nameId === 'pr-41')!
    assert.equal(namespace.versionId, first.outputs['version-id'])

    const second = await deploy({ path: await build('second push'), namespace: 'pr-41' }, 41, 'b'.repeat(40))
    ok(second)
    assert.equal(second.outputs.verified, 'true')
    assert.equal((await fetchLocally(url)).text, '<title>second push</title>')
  })

  test('with a custom domain: url is the namespace host; the log, summary and comment show the pending domain and its CNAME', async () => {
    const domain = 'pr-42.preview.example.com'
    const run = await deploy({ path: await build('domain'), namespace: 'pr-42', domain }, 42, 'c'.repeat(40))
    ok(run)
    const host = `demo-game--pr-42.localhost`
    assert.equal(run.outputs.url, `http://${host}:${new URL(emulator.url).port}/`)
    assert.equal(run.outputs['domain-status'], 'pending')
    const cname = new RegExp(
      `Domain ${domain.replace(/\./g, '\\.')} is pending: create a CNAME record ${domain.replace(/\./g, '\\.')} → ${host}`,
    )
    assert.match(run.stdout, cname)
    assert.match(run.summary, new RegExp(`${domain.replace(/\./g, '\\.')} pending: create a CNAME record`))
    const [comment] = github.comments(REPO, 42)
    assert.ok(comment, 'the preview comment')
    assert.match(comment.body, /pending/)
    assert.ok(comment.body.includes(host), comment.body)
  })

  test('a page header the CDN drops is refused before anything is created', async () => {
    const namespaces = emulator.namespaces(GAME).length
    const sites = emulator.sites(GAME).length
    const run = await deploy(
      {
        path: await build('headers'),
        namespace: 'pr-43',
        headers: '"**/*.html": {Cache-Control: "public, max-age=60"}',
      },
      43,
      'd'.repeat(40),
    )
    assert.equal(run.exitCode, 1, run.stdout)
    assert.match(
      run.stdout,
      /^::error::headers: '\*\*\/\*\.html' header 'Cache-Control' never reaches a browser/m,
    )
    assert.equal(emulator.namespaces(GAME).length, namespaces, 'no namespace created')
    assert.equal(emulator.sites(GAME).length, sites, 'no site created')
  })

  test('a publish that never reaches the host: the namespace is put back on what it served, and the run fails saying what the host served', async () => {
    // The second publish that changes a version is acknowledged but never reaches the host.
    const lossy = await startEmulator({ rateLimit: false, faults: { lostPublishes: [2] } })
    try {
      const first = await deploy(
        { path: await build('good build'), namespace: 'pr-44' },
        44,
        'e'.repeat(40),
        lossy,
      )
      ok(first)
      const second = await deploy(
        { path: await build('lost build'), namespace: 'pr-44', 'verify-timeout': '8' },
        44,
        'f'.repeat(40),
        lossy,
      )
      assert.equal(second.exitCode, 1, second.stdout)
      assert.equal(second.outputs.verified, 'false')
      const url = first.outputs.url!
      assert.match(
        second.stdout,
        new RegExp(
          `^::error::Not live: ${url} did not serve this build within \\d+\\.\\d s \\(\\d+ checks\\): ${url} .*` +
            `Namespace pr-44 was put back on version ${first.outputs['version-id']}, which it served before\\.$`,
          'm',
        ),
      )
      assert.equal(lossy.faults.publishesLost, 1)
      const namespace = lossy.namespaces(GAME).find((n) => n.nameId === 'pr-44')!
      assert.equal(namespace.versionId, first.outputs['version-id'])
      assert.equal((await fetchLocally(url)).text, '<title>good build</title>')
      assert.match(second.summary, /not seen live/)
    } finally {
      await lossy.close()
    }
  })
})
