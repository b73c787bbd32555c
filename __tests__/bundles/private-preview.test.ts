// Private previews through dist/index.js against the emulator at its defaults (a new namespace serves
// nothing until its config is rebuilt, a change reaches the host 3 s later): the host never serves the
// build without credentials, at any moment of the run, and serves it with them; no log line, output,
// summary or comment holds the password.
import assert from 'node:assert/strict'
import { get } from 'node:http'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { startEmulator, type Emulator } from '../../src/emulator/index.ts'
import { actionDefaults, runAction, type ActionRun } from '../../scripts/run-action.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { startGitHubStub, type GitHubStub } from '../support/github-api.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'

const REPO = 'studio/space-game'

/** GET a URL of a *.localhost host from 127.0.0.1, with an Authorization header or none. */
function fetchHost(
  url: string,
  authorization?: string,
): Promise<{ status: number; wwwAuthenticate: string | undefined; body: string }> {
  const target = new URL(url)
  const headers: Record<string, string> = { host: target.host }
  if (authorization) headers.authorization = authorization
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port: target.port, path: target.pathname, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          wwwAuthenticate: res.headers['www-authenticate'],
          body: Buffer.concat(chunks).toString(),
        }),
      )
      res.on('error', reject)
    })
    req.on('error', reject)
  })
}

const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`

/** Everything of a run a reader could see: the log (but the runner's own mask commands), outputs, summary. */
function visibleText(run: ActionRun): string {
  const log = `${run.stdout}\n${run.stderr}`
    .split('\n')
    .filter((line) => !line.startsWith('::add-mask::'))
    .join('\n')
  return [log, JSON.stringify(run.outputs), run.summary].join('\n')
}

function assertHidden(text: string, user: string, password: string, where: string): void {
  for (const secret of [password, Buffer.from(`${user}:${password}`).toString('base64')])
    assert.ok(
      !text.includes(secret),
      `${where} holds the password (${secret.slice(0, 3)}…): ${text
        .split('\n')
        .filter((l) => l.includes(secret))
        .join('\n')
        .slice(0, 400)}`,
    )
}

describe('private previews through dist/index.js, at the emulator defaults', () => {
  let emulator: Emulator
  let github: GitHubStub
  let defaults: Record<string, string>
  let url: string
  before(async () => {
    emulator = await startEmulator({ rateLimit: false })
    github = await startGitHubStub({
      'gh-write': { user: { login: 'github-actions[bot]', type: 'Bot' }, canComment: true },
    })
    defaults = await actionDefaults(path.join(root, 'action.yml'))
    url = `http://demo-game--pr-51.localhost:${new URL(emulator.url).port}/`
  })
  after(async () => {
    await emulator.close()
    await github.close()
  })

  const build = async (title: string) => {
    const dir = await tempDir()
    await writeTree(dir, { 'index.html': `<title>${title}</title>`, 'Build/game.wasm': `\0asm ${title}` })
    return dir
  }
  const deploy = (inputs: Record<string, string>, sha: string) =>
    runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      githubToken: 'gh-write',
      event: {
        name: 'pull_request',
        payload: {
          number: 51,
          pull_request: {
            number: 51,
            head: { sha, repo: { full_name: REPO } },
            base: { repo: { full_name: REPO } },
          },
        },
      },
      env: { GITHUB_API_URL: github.url, GITHUB_REF: 'refs/pull/51/merge' },
      inputs: { 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, namespace: 'pr-51', ...inputs },
    })

  /** Runs the deploy while fetching the host without credentials every 50 ms; every status seen. */
  async function deployWatched(inputs: Record<string, string>, sha: string) {
    const statuses: number[] = []
    let running = true
    const watching = (async () => {
      while (running) {
        statuses.push((await fetchHost(url)).status)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })()
    const run = await deploy(inputs, sha).finally(() => (running = false))
    await watching
    statuses.push((await fetchHost(url)).status)
    return { run, statuses }
  }

  const comments = () =>
    github
      .comments(REPO, 51)
      .map((comment) => comment.body)
      .join('\n')

  test('a new private preview: never served without credentials during the run, served with them after', async () => {
    const password = 'first-passphrase-41'
    const { run, statuses } = await deployWatched(
      { path: await build('private first'), 'basic-auth': `tester:${password}` },
      'a'.repeat(40),
    )
    assert.equal(run.exitCode, 0, run.stdout)
    assert.equal(run.outputs.verified, 'true', 'seen live with the credentials')
    assert.ok(statuses.length > 20, `the host was watched through the run (${statuses.length} fetches)`)
    // Before the namespace is private its host serves nothing (404: it does not exist, or has no
    // config yet); from the first 401 on, only 401.
    assert.ok(!statuses.includes(200), `never served without credentials: ${statuses.join(' ')}`)
    const first401 = statuses.indexOf(401)
    assert.ok(first401 >= 0, statuses.join(' '))
    assert.ok(
      statuses.slice(0, first401).every((status) => status === 404),
      statuses.join(' '),
    )
    assert.ok(
      statuses.slice(first401).every((status) => status === 401),
      statuses.join(' '),
    )

    const without = await fetchHost(url)
    assert.equal(without.status, 401)
    assert.equal(without.wwwAuthenticate, 'Basic realm="RivetCdn"')
    assert.equal((await fetchHost(url, basic(`tester:${password}`))).body, '<title>private first</title>')
    assert.equal((await fetchHost(url, basic('tester:wrong-passphrase'))).status, 401)

    // The order: user and basic auth before the host is seen answering 401, and only then the publish.
    const log = run.stdout
    const madePrivate = log.indexOf('is made private before the build is published to it: user tester added')
    const seen401 = log.indexOf(`${url} answers 401 without credentials`)
    const published = log.search(/^Published version /m)
    assert.ok(madePrivate > 0 && seen401 > madePrivate && published > seen401, log)

    // Masked at once (the runner hides the password, alone and as a Basic header), and never written.
    assert.ok(run.stdout.includes(`::add-mask::${password}\n`))
    assert.ok(run.stdout.includes(`::add-mask::${Buffer.from(`tester:${password}`).toString('base64')}\n`))
    assertHidden(visibleText(run), 'tester', password, 'the log, outputs or summary')
    assertHidden(comments(), 'tester', password, 'the comment')
    assert.match(run.summary, /private \(basic auth\): ask the team for the password of user tester/)
    assert.match(comments(), /private \(basic auth\): ask the team for the password of user `tester`/)
  })

  test('the next push with a new password: 401 without credentials at every moment, the new password serves it', async () => {
    const password = 'second-passphrase-42'
    const { run, statuses } = await deployWatched(
      { path: await build('private second'), 'basic-auth': `tester:${password}` },
      'b'.repeat(40),
    )
    assert.equal(run.exitCode, 0, run.stdout)
    assert.equal(run.outputs.verified, 'true')
    assert.ok(
      statuses.every((status) => status === 401),
      `401 at every moment: ${statuses.join(' ')}`,
    )
    assert.equal((await fetchHost(url, basic(`tester:${password}`))).body, '<title>private second</title>')
    assert.equal((await fetchHost(url, basic('tester:first-passphrase-41'))).status, 401, 'replaced')
    assertHidden(visibleText(run), 'tester', password, 'the log, outputs or summary')
    assertHidden(comments(), 'tester', password, 'the comment')
  })

  test('an empty basic-auth makes the namespace public again, and says so', async () => {
    const run = await deploy({ path: await build('public again') }, 'c'.repeat(40))
    assert.equal(run.exitCode, 0, run.stdout)
    assert.match(
      run.stdout,
      /^basic-auth is empty: namespace pr-51 was private and is made public again \(basic auth off, user tester removed\)/m,
    )
    assert.equal(run.outputs.verified, 'true')
    const served = await fetchHost(url)
    assert.equal(served.status, 200)
    assert.equal(served.body, '<title>public again</title>')
    assert.doesNotMatch(run.summary, /private/)
  })
})
