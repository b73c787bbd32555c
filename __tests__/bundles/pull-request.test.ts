// Pull-request previews through dist/index.js, against the emulator and a stand-in of the GitHub API.
import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { after, afterEach, before, beforeEach, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { DEFAULT_SEED, type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { previewKey, previewMarker, stateComment } from '../../src/actions/preview.ts'
import { actionDefaults, runAction, type ActionRun } from '../../scripts/run-action.ts'
import { siteFiles, tempDir, writeTree } from '../support/helpers.ts'
import { startGitHubStub, type GitHubStub } from '../support/github-api.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const REPO = 'studio/space-game'
const BOT = { login: 'github-actions[bot]', type: 'Bot' as const }
const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'

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
    emulator = await startTestEmulator()
    github = await startGitHubStub({
      'gh-write': { user: BOT, canComment: true },
      'gh-read-only': { user: BOT, canComment: false },
      'gh-user': { user: { login: 'dev-lead', type: 'User' }, canComment: true },
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
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
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
    assert.match(second.stdout, new RegExp(`Namespace pr-12 exists: using ${first.outputs['namespace-id']}`))
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
    // The domain as the service reports it: active, the link shown first (the namespace's host
    // beside it); pending, not linked, with the CNAME record to create.
    const status = await preview(12, { sha: 'ccccccc3333333' })
    ok(status)
    const host = `http://demo-game--pr-12.localhost:${new URL(emulator.url).port}/`
    assert.equal(status.outputs.url, host)
    if (status.outputs['domain-status'] === 'active') {
      assert.match(
        ours(12)[0]!.body,
        /\| Preview \| \[pr-12\.preview\.example\.com\]\(https:\/\/pr-12\.preview\.example\.com\/\) \|\n\| --- \| --- \|\n\| Host \| \[http:/,
      )
    } else {
      assert.equal(status.outputs['domain-status'], 'pending')
      assert.match(
        ours(12)[0]!.body,
        /\| Domain \| `pr-12\.preview\.example\.com` pending: create a CNAME record `pr-12\.preview\.example\.com` → `/,
      )
    }
  })

  test('our comment is found past the first page and updated in place', async () => {
    for (let i = 0; i < 130; i++) github.addComment(REPO, 13, `noise ${i}`)
    const first = await preview(13)
    ok(first)
    const mine = ours(13)
    assert.equal(mine.length, 1)
    assert.equal(mine[0]!.user.login, BOT.login)
    for (let i = 0; i < 10; i++) github.addComment(REPO, 13, `more noise ${i}`)

    const run = await preview(13, { inputs: { 'skip-unchanged': 'false' } })
    ok(run)
    assert.equal(ours(13).length, 1)
    assert.equal(ours(13)[0]!.id, mine[0]!.id)
    assert.match(ours(13)[0]!.body, new RegExp(run.outputs['site-id']!))
    assert.ok(github.requests.some((r) => r.method === 'GET' && r.path.endsWith('/issues/13/comments')))
  })

  test('a forged comment changes nothing: neither read nor edited', async () => {
    const production = DEFAULT_SEED.games[0]!.namespaces![0]!.id
    // Someone who can comment posts our marker with a state that points at production, and claims
    // that an existing site already holds this very build (so skip-unchanged would reuse it).
    const planted = await preview(18, {
      inputs: { comment: 'false', namespace: 'pr-18-planted', domain: '' },
    })
    ok(planted)
    // The key of this very preview: its namespace on this game of this service.
    const key = previewKey({
      connection: { apiUrl: emulator.url, gameId: GAME },
      site: { name: 'pr-18', nameGiven: false },
      target: {
        kind: 'name',
        nameId: 'pr-18',
        displayName: 'pr-18',
        versionId: undefined,
        domain: undefined,
        matchmaker: undefined,
        publish: true,
        cdnDomain: 'rivet.game',
      },
    })
    const forgedState = {
      key,
      namespaceNameId: 'pr-18',
      namespaceId: production,
      siteId: planted.outputs['site-id'],
      digest: planted.outputs.digest,
    }
    const forgedBody = `${previewMarker(key)}\nforged\n${stateComment(forgedState)}`
    const forged = github.addComment(REPO, 18, forgedBody, { login: 'mallory', type: 'User' })

    const run = await preview(18)
    ok(run)
    assert.equal(run.outputs.skipped, 'false', 'the forged digest is not believed')
    assert.notEqual(run.outputs['site-id'], planted.outputs['site-id'])
    assert.notEqual(run.outputs['namespace-id'], production)
    assert.equal(
      run.outputs['namespace-id'],
      emulator.namespaces(GAME).find((n) => n.nameId === 'pr-18')?.namespaceId,
    )
    const productionView = emulator.namespaces(GAME).find((n) => n.namespaceId === production)!
    assert.ok(!productionView.domains.includes('pr-18.preview.example.com'))
    assert.match(
      run.stdout,
      /::warning::Ignored 1 comment on #18 that carry the preview's marker but were not written by github-actions\[bot\]/,
    )
    assert.equal(github.comments(REPO, 18).find((c) => c.id === forged.id)?.body, forgedBody, 'never edited')
    const mine = ours(18).filter((c) => c.user.login === BOT.login)
    assert.equal(mine.length, 1, 'our own comment, beside the forged one')
    assert.match(mine[0]!.body, new RegExp(`Deployed site \`${run.outputs['site-id']}\``))
  })

  test('a personal token reads and edits only the comments its user wrote', async () => {
    const first = await preview(19, { githubToken: 'gh-user' })
    ok(first)
    assert.deepEqual(
      ours(19).map((c) => c.user.login),
      ['dev-lead'],
    )
    const second = await preview(19, { githubToken: 'gh-user', inputs: { 'skip-unchanged': 'false' } })
    ok(second)
    assert.equal(ours(19).length, 1)
    assert.match(ours(19)[0]!.body, new RegExp(second.outputs['site-id']!))
  })

  test('a re-run needs no memory: without any comment it finds the namespace and its domain', async () => {
    const first = await preview(14, { inputs: { comment: 'false' } })
    ok(first)
    const domainAdds = () =>
      emulator.requests.filter(
        (r) =>
          r.method === 'POST' &&
          r.path === `/cloud/games/${GAME}/namespaces/${first.outputs['namespace-id']}/domains`,
      ).length
    assert.equal(domainAdds(), 1)
    const again = await preview(14, { inputs: { comment: 'false' } })
    ok(again)
    assert.equal(again.outputs['namespace-id'], first.outputs['namespace-id'])
    assert.equal(domainAdds(), 1, 'no second domain request')
    assert.equal(emulator.namespaces(GAME).filter((n) => n.nameId === 'pr-14').length, 1)
  })

  test('two runs of one new preview at once end on one namespace with its domain', async () => {
    const [a, b] = await Promise.all([
      preview(20, { inputs: { comment: 'false' } }),
      preview(20, { inputs: { comment: 'false' } }),
    ])
    ok(a)
    ok(b)
    const namespaces = emulator.namespaces(GAME).filter((n) => n.nameId === 'pr-20')
    assert.equal(namespaces.length, 1)
    assert.equal(a.outputs['namespace-id'], namespaces[0]!.namespaceId)
    assert.equal(b.outputs['namespace-id'], namespaces[0]!.namespaceId)
    assert.deepEqual(namespaces[0]!.domains, ['pr-20.preview.example.com'])
  })

  test('without version-id, a new namespace is created on what prod serves, and says so; the version made from it is published to it', async () => {
    // The seed's game has prod, as every new game of the service: what it serves, seeded or deployed by an earlier test.
    const game = (await (
      await fetch(`${emulator.url}/cloud/games/${GAME}`, {
        headers: { authorization: 'Bearer gamehost-demo-token' },
      })
    ).json()) as {
      game: {
        namespaces: Array<{ name_id: string; version_id: string }>
        versions: Array<{ version_id: string; display_name: string }>
      }
    }
    const prodVersion = game.game.namespaces.find((n) => n.name_id === 'prod')!.version_id
    const base = game.game.versions.find((v) => v.version_id === prodVersion)!
    const escaped = base.display_name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    const run = await preview(21, { inputs: { 'version-id': '' } })
    ok(run)
    const namespace = emulator.namespaces(GAME).find((n) => n.nameId === 'pr-21')!
    assert.equal(namespace.versionId, run.outputs['version-id'])
    assert.match(
      run.stdout,
      new RegExp(`The new version '.*' will be made from version '${escaped}' \\(${prodVersion}\\)`),
    )
    assert.match(
      run.stdout,
      new RegExp(
        `Created namespace pr-21 \\(${namespace.namespaceId}\\) on version ${prodVersion} \\('${escaped}', what prod serves: no version-id was given\\)`,
      ),
    )
    assert.match(
      run.stdout,
      new RegExp(`Published version '.*' to namespace pr-21 \\(${namespace.namespaceId}\\)`),
    )
    assert.deepEqual(
      emulator.versionHistory(GAME, namespace.namespaceId).map((h) => h.versionId),
      [namespace.versionId],
    )
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
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
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
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
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

describe('re-runs after a failure, on any event', () => {
  let emulator: Emulator
  let github: GitHubStub
  let site: string
  let defaults: Record<string, string>
  beforeEach(async () => {
    // The first read of a namespace in each test is refused (and retries are off): its first run
    // uploads, publishes, creates its namespace on the new version, then fails before adding the domain.
    emulator = await startTestEmulator({
      faults: { script: { 'GET /cloud/games/:game_id/namespaces/:namespace_id': ['503'] } },
    })
  })
  afterEach(() => emulator.close())
  before(async () => {
    github = await startGitHubStub({ 'gh-write': { user: BOT, canComment: true } })
    site = await tempDir()
    await writeTree(site, siteFiles(5))
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(() => github.close())

  const run = (event: { name: string; payload: unknown } | undefined, nameId: string) =>
    runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      ...(event ? { event } : {}),
      githubToken: 'gh-write',
      env: { GITHUB_API_URL: github.url },
      inputs: {
        'api-url': emulator.url,
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
        token: 'gamehost-demo-token',
        'game-id': GAME,
        path: site,
        namespace: nameId,
        domain: `${nameId}.preview.example.com`,
        retries: '0',
      },
    })
  const domainAdds = (namespaceId: string) =>
    emulator.requests.filter(
      (r) => r.method === 'POST' && r.path === `/cloud/games/${GAME}/namespaces/${namespaceId}/domains`,
    ).length

  test('a pull-request run that failed after creating its namespace: the re-run deploys to it', async () => {
    const failed = await run(prEvent(30), 'pr-30')
    assert.equal(failed.exitCode, 1, failed.stdout)
    assert.match(failed.stdout, /::error::games\.namespaces\.getGameNamespaceById failed: 503/)
    const created = emulator.namespaces(GAME).find((n) => n.nameId === 'pr-30')!
    assert.match(failed.stdout, new RegExp(`Created namespace pr-30 \\(${created.namespaceId}\\)`))
    const sites = emulator.sites(GAME).length

    const rerun = await run(prEvent(30), 'pr-30')
    assert.equal(rerun.exitCode, 0, rerun.stdout)
    assert.equal(rerun.outputs['namespace-id'], created.namespaceId)
    assert.ok(emulator.site(rerun.outputs['site-id']!)?.completed)
    // The preview remembered the completed site: the re-run uploads nothing, and the namespace already serves it.
    assert.equal(rerun.outputs.skipped, 'true')
    assert.equal(emulator.sites(GAME).length, sites)
    // The failed run created the namespace on the base version and never published: the re-run
    // publishes the completed site to it.
    assert.notEqual(rerun.outputs['version-id'], created.versionId)
    assert.deepEqual(
      emulator.versionHistory(GAME, created.namespaceId).map((h) => h.versionId),
      [rerun.outputs['version-id']],
    )
    assert.equal(emulator.namespaces(GAME).filter((n) => n.nameId === 'pr-30').length, 1)
    assert.equal(domainAdds(created.namespaceId), 1, 'one domain request in all')
  })

  test('a push-event run that failed: the re-run, with no comment anywhere, deploys to its namespace', async () => {
    const before = github.requests.length
    const failed = await run(undefined, 'staging')
    assert.equal(failed.exitCode, 1, failed.stdout)
    const created = emulator.namespaces(GAME).find((n) => n.nameId === 'staging')!
    const rerun = await run(undefined, 'staging')
    assert.equal(rerun.exitCode, 0, rerun.stdout)
    assert.equal(rerun.outputs['namespace-id'], created.namespaceId)
    assert.equal(emulator.namespaces(GAME).filter((n) => n.nameId === 'staging').length, 1)
    assert.equal(domainAdds(created.namespaceId), 1, 'one domain request in all')
    assert.equal(github.requests.length, before, 'no GitHub call on a push event')
  })
})
