// A pull request's preview lives and dies with it, through dist/index.js as the runner runs it: served
// while the pull request is open, replaced by the closed page when it closes (domain freed, comment
// updated, GitHub deployments inactive where the token may); closing twice changes nothing.
import assert from 'node:assert/strict'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fetchLocally, type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { startGitHubStub, type GitHubStub } from '../support/github-api.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'

const REPO = 'studio/space-game'
const BOT = { login: 'github-actions[bot]', type: 'Bot' as const }

describe('a preview closed with its pull request', () => {
  let emulator: Emulator
  let github: GitHubStub
  let site: string
  let defaults: Record<string, string>
  let port: string
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false })
    github = await startGitHubStub({
      'gh-deploy': { user: BOT, canComment: true, canDeploy: true },
      'gh-no-deploy': { user: BOT, canComment: true },
    })
    site = await tempDir()
    await writeTree(site, { 'index.html': '<title>the game</title>', 'game.js': 'play()' })
    defaults = await actionDefaults(path.join(root, 'action.yml'))
    port = new URL(emulator.url).port
  })
  after(async () => {
    await emulator.close()
    await github.close()
  })

  const event = (number: number, action: string) => ({
    name: 'pull_request',
    payload: {
      action,
      number,
      pull_request: {
        number,
        head: { sha: 'abcdef1234567', ref: `feature-${number}`, repo: { full_name: REPO } },
        base: { repo: { full_name: REPO } },
      },
    },
  })
  const run = (number: number, action: string, githubToken: string, extra: Record<string, string> = {}) =>
    runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      event: event(number, action),
      githubToken,
      env: { GITHUB_API_URL: github.url, GITHUB_REF: `refs/pull/${number}/merge` },
      inputs: {
        'api-url': emulator.url,
        token: TOKEN,
        'game-id': GAME,
        path: site,
        namespace: `pr-${number}`,
        domain: `pr-${number}.preview.example.com`,
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
        ...extra,
      },
    })

  test('served while open; on close the closed page, the domain freed, the comment and deployments updated', async () => {
    const opened = await run(41, 'opened', 'gh-deploy')
    assert.equal(opened.exitCode, 0, opened.stdout)
    const url = `http://demo-game--pr-41.localhost:${port}/`
    assert.equal((await fetchLocally(url)).text, '<title>the game</title>')
    assert.equal(opened.outputs['domain-status'], 'pending')
    // Served at the custom domain once the service sees its CNAME.
    emulator.verifyDomain('pr-41.preview.example.com')
    assert.equal((await fetchLocally(`http://pr-41.preview.example.com:${port}/`)).status, 200)
    const deployment = github.addDeployment(REPO, 'feature-41', 'preview-pr-41')
    const other = github.addDeployment(REPO, 'main', 'production')

    const closed = await run(41, 'closed', 'gh-deploy', { path: 'no-such-folder' })
    assert.equal(closed.exitCode, 0, closed.stdout)
    const page = await fetchLocally(url)
    assert.equal(page.status, 200)
    assert.match(page.text, /The preview of pull request #41 was closed/)
    assert.doesNotMatch(page.text, /the game/)
    assert.equal((await fetchLocally(`${url}game.js`)).status, 404, 'no build content is served')
    const namespace = emulator.namespaces(GAME).find((n) => n.nameId === 'pr-41')!
    assert.deepEqual(namespace.domains, [], 'the domain is free again')
    assert.equal(closed.outputs['namespace-id'], namespace.namespaceId)
    assert.equal(closed.outputs['version-id'], namespace.versionId)
    assert.equal(closed.outputs.url, url)
    assert.match(closed.summary, /gamehost preview closed/)
    assert.match(closed.summary, /pr-41\.preview\.example\.com removed: it is free again/)

    const comments = github.comments(REPO, 41)
    assert.equal(comments.length, 1, 'the one sticky comment, updated')
    assert.match(comments[0]!.body, /🔒 Pull request #41 was closed: the preview no longer serves its build/)
    assert.deepEqual(
      deployment.statuses.map((s) => s.state),
      ['inactive', 'success'],
    )
    assert.deepEqual(
      other.statuses.map((s) => s.state),
      ['success'],
      "another ref's deployment is left alone",
    )

    // Closing again (a re-run): nothing is created or changed.
    const sites = emulator.sites(GAME).length
    const again = await run(41, 'closed', 'gh-deploy', { path: 'no-such-folder' })
    assert.equal(again.exitCode, 0, again.stdout)
    assert.match(again.stdout, /already serves the closed page/)
    assert.equal(emulator.sites(GAME).length, sites)
    assert.equal(emulator.namespaces(GAME).find((n) => n.nameId === 'pr-41')!.versionId, namespace.versionId)
    assert.deepEqual(
      deployment.statuses.map((s) => s.state),
      ['inactive', 'success'],
    )
  })

  test('a token without deployments: write gives a warning naming the permission; the preview is closed all the same', async () => {
    assert.equal((await run(42, 'synchronize', 'gh-no-deploy')).exitCode, 0)
    github.addDeployment(REPO, 'feature-42', 'preview-pr-42')
    const closed = await run(42, 'closed', 'gh-no-deploy')
    assert.equal(closed.exitCode, 0, closed.stdout)
    assert.match(
      closed.stdout,
      /^::warning::Could not mark the pull request's GitHub deployments inactive: 403 .*deployments: write/m,
    )
    assert.match((await fetchLocally(`http://demo-game--pr-42.localhost:${port}/`)).text, /#42 was closed/)
  })

  test('closing a pull request that was never deployed changes nothing', async () => {
    const sites = emulator.sites(GAME).length
    const closed = await run(43, 'closed', 'gh-deploy')
    assert.equal(closed.exitCode, 0, closed.stdout)
    assert.match(closed.stdout, /this preview was never deployed, nothing to close/)
    assert.equal(emulator.sites(GAME).length, sites)
    assert.equal(closed.outputs['namespace-id'], '')
  })
})
