// Pull-request previews through dist/index.js, against the emulator and a stand-in of the GitHub API.
import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { startEmulator, type Emulator } from '../src/emulator/index.ts'
import { previewMarker, stateComment } from '../src/preview.ts'
import { actionDefaults, runAction, type ActionRun } from '../scripts/run-action.ts'
import { siteFiles, tempDir, writeTree } from './helpers.ts'
import { startGitHubStub, type GitHubStub } from './support/github-api.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const REPO = 'studio/space-game'
const BOT = { login: 'github-actions[bot]', type: 'Bot' as const }

function prEvent(number: number, headRepo = REPO, sha = 'aaaaaaa1111111') {
  return {
    name: 'pull_request',
    payload: {
      action: 'synchronize',
      number,
      pull_request: {
        number,
        head: { sha, repo: { full_name: headRepo } },
        base: { repo: { full_name: REPO } },
      },
    },
  }
}

describe('pull-request previews', () => {
  let emulator: Emulator
  let github: GitHubStub
  let site: string
  let defaults: Record<string, string>
  before(async () => {
    emulator = await startEmulator({ multipartThreshold: 64 * 1024, partSize: 64 * 1024 })
    github = await startGitHubStub({
      'gh-write': { user: BOT, canComment: true },
      'gh-read-only': { user: BOT, canComment: false },
    })
    site = await tempDir()
    await writeTree(site, siteFiles(30, { name: 'game.data', size: 200 * 1024 }))
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(async () => {
    await emulator.close()
    await github.close()
  })

  const preview = (
    issue: number,
    extra: { inputs?: Record<string, string>; githubToken?: string; sha?: string } = {},
  ) =>
    runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      event: prEvent(issue, REPO, extra.sha),
      githubToken: extra.githubToken ?? 'gh-write',
      env: { GITHUB_API_URL: github.url, GITHUB_REF: `refs/pull/${issue}/merge` },
      inputs: {
        'api-url': emulator.url,
        token: 'gamehost-demo-token',
        'game-id': '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
        path: site,
        namespace: `pr-${issue}`,
        'version-id': '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
        domain: `pr-${issue}.preview.example.com`,
        ...extra.inputs,
      },
    })
  const ours = (issue: number) =>
    github.comments(REPO, issue).filter((c) => c.body.includes('gamehost-preview'))
  const ok = (run: ActionRun) => assert.equal(run.exitCode, 0, run.stdout + run.stderr)

  test('three runs on one PR with 35 other comments: one comment, namespace reused, unchanged build skipped', async () => {
    for (let i = 0; i < 35; i++) {
      github.addComment(REPO, 12, `comment ${i}`, i % 5 === 0 ? BOT : { login: `dev${i}`, type: 'User' })
    }

    const first = await preview(12, { sha: 'aaaaaaa1111111' })
    ok(first)
    const site1 = first.outputs['site-id']!
    assert.equal(first.outputs.skipped, 'false')
    assert.equal(ours(12).length, 1)
    assert.match(ours(12)[0]!.body, new RegExp(`Deployed site \`${site1}\``))

    await writeFile(path.join(site, 'index.html'), '<!doctype html><title>changed</title>')
    const second = await preview(12, { sha: 'bbbbbbb2222222' })
    ok(second)
    const site2 = second.outputs['site-id']!
    assert.notEqual(site2, site1)
    assert.equal(second.outputs['namespace-id'], first.outputs['namespace-id'])
    assert.match(
      second.stdout,
      /Namespace pr-12 exists already: reusing .* \(remembered by the preview comment\)/,
    )
    assert.match(second.stdout, /Domain pr-12\.preview\.example\.com is already attached/)
    assert.equal(
      emulator.namespaces('4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86').filter((n) => n.nameId === 'pr-12').length,
      1,
    )

    const sitesBefore = emulator.sites('4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86').length
    const third = await preview(12, { sha: 'ccccccc3333333' })
    ok(third)
    assert.equal(third.outputs.skipped, 'true')
    assert.equal(third.outputs['site-id'], site2)
    assert.equal(third.outputs.digest, second.outputs.digest)
    assert.equal(
      emulator.sites('4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86').length,
      sitesBefore,
      'no site created',
    )
    assert.match(third.summary, /unchanged, no new site/)

    assert.equal(github.comments(REPO, 12).length, 36)
    assert.equal(ours(12).length, 1, 'exactly one comment from the action')
    const body = ours(12)[0]!.body
    assert.match(body, new RegExp(`No change since the last preview: site \`${site2}\``))
    assert.match(
      body,
      /\| Commit \| \[ccccccc\]\(https:\/\/github\.com\/studio\/space-game\/commit\/ccccccc3333333\) \|/,
    )
    assert.match(
      body,
      /\| Domain \| \[pr-12\.preview\.example\.com\]\(https:\/\/pr-12\.preview\.example\.com\/\) \|/,
    )
  })

  test('the comment is found past the first page, whoever wrote it, and updated in place', async () => {
    for (let i = 0; i < 130; i++) github.addComment(REPO, 13, `noise ${i}`)
    // An earlier run's comment on page 2, written by another account (a personal token, say).
    const earlier = await preview(13, { inputs: { comment: 'false' } })
    ok(earlier)
    const state = {
      key: 'namespace:pr-13',
      namespaceNameId: 'pr-13',
      namespaceId: earlier.outputs['namespace-id'],
    }
    const planted = github.addComment(
      REPO,
      13,
      `${previewMarker('namespace:pr-13')}\nold\n${stateComment(state)}`,
      {
        login: 'octocat',
        type: 'User',
      },
    )
    for (let i = 0; i < 10; i++) github.addComment(REPO, 13, `more noise ${i}`)

    const run = await preview(13, { inputs: { 'skip-unchanged': 'false' } })
    ok(run)
    assert.match(run.stdout, /reusing .* \(remembered by the preview comment\)/)
    assert.equal(ours(13).length, 1)
    assert.equal(ours(13)[0]!.id, planted.id)
    assert.match(ours(13)[0]!.body, new RegExp(run.outputs['site-id']!))
    assert.ok(github.requests.some((r) => r.method === 'GET' && r.path.endsWith('/issues/13/comments')))
  })

  test('a re-run without a comment to remember the namespace says how to pass its id', async () => {
    ok(await preview(14, { inputs: { comment: 'false' } }))
    const again = await preview(14, { inputs: { comment: 'false' } })
    assert.equal(again.exitCode, 1)
    assert.match(again.stdout, /::error::namespace: 'pr-14' exists already, .*Pass namespace-id with the id/)
    const id = emulator
      .namespaces('4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86')
      .find((n) => n.nameId === 'pr-14')!.namespaceId
    const withId = await preview(14, { inputs: { comment: 'false', 'namespace-id': id } })
    ok(withId)
    assert.match(withId.stdout, /reusing .* \(from namespace-id\)/)
  })

  test('a token refused permission to comment gives a warning, never a failed deploy', async () => {
    const run = await preview(15, { githubToken: 'gh-read-only' })
    ok(run)
    assert.ok(run.outputs['site-id'])
    assert.match(
      run.stdout,
      /::warning::Could not comment on #15: 403 Resource not accessible by integration/,
    )
    assert.equal(github.comments(REPO, 15).length, 0)
  })

  test('a fork PR without a token passes with a warning and calls nothing', async () => {
    const requests = emulator.requests.length
    const run = await runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      event: prEvent(16, 'someone/space-game'),
      githubToken: 'gh-write',
      env: { GITHUB_API_URL: github.url },
      inputs: {
        'api-url': emulator.url,
        token: '',
        'game-id': '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
        path: site,
      },
    })
    ok(run)
    assert.match(run.stdout, /::warning title=Deploy skipped::Pull request #16 comes from a fork/)
    assert.equal(run.outputs.skipped, 'true')
    assert.equal(run.outputs['site-id'], '')
    assert.match(run.summary, /gamehost deploy skipped/)
    assert.equal(emulator.requests.length, requests)
    assert.equal(github.comments(REPO, 16).length, 0)
  })

  test('the same PR from the base repository without a token fails', async () => {
    const run = await preview(17, { inputs: { token: '' } })
    assert.equal(run.exitCode, 1)
    assert.match(run.stdout, /::error::token is empty/)
  })

  test('a release (push) run comments nowhere', async () => {
    const before = github.requests.length
    const run = await runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      githubToken: 'gh-write',
      env: { GITHUB_API_URL: github.url, GITHUB_REF: 'refs/tags/v1.0.0' },
      inputs: {
        'api-url': emulator.url,
        token: 'gamehost-demo-token',
        'game-id': '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
        path: site,
      },
    })
    ok(run)
    assert.equal(github.requests.length, before)
    assert.equal(emulator.site(run.outputs['site-id']!)?.displayName, 'space-game v1.0.0 1a2b3c4')
  })
})
