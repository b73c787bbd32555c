import assert from 'node:assert/strict'
import { test } from 'node:test'
import { checkPullRequestRead, readEvent, whenNoToken } from '../../src/actions/event.ts'
import {
  nextState,
  previewKey,
  previewMarker,
  readState,
  renderComment,
  stateComment,
} from '../../src/actions/preview.ts'
import { markdownText } from '../../src/common/untrusted.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const OTHER_GAME = '9d1f3b5a-7c2e-4a68-b0d4-6e8f0a2c4b61'

const env = {
  GITHUB_EVENT_NAME: 'pull_request',
  GITHUB_REPOSITORY: 'studio/space-game',
  GITHUB_SERVER_URL: 'https://github.com',
  GITHUB_RUN_ID: '99',
}
const pr = (head: string | null) => ({
  pull_request: {
    number: 12,
    head: { sha: 'abc123456789', repo: head === null ? null : { full_name: head } },
    base: { repo: { full_name: 'studio/space-game' } },
  },
})

test('a pull request event whose event file names no pull request fails, saying it would deploy as a push', () => {
  for (const name of ['pull_request', 'pull_request_target']) {
    const run = { ...env, GITHUB_EVENT_NAME: name, GITHUB_EVENT_PATH: '/runner/event.json' }
    for (const payload of [undefined, {}, { pull_request: {} }]) {
      assert.throws(
        () => checkPullRequestRead(readEvent(run, payload), run),
        new RegExp(
          `^Error: This is a ${name} run, but its event file \\(GITHUB_EVENT_PATH: /runner/event\\.json\\) could not be read ` +
            'as a pull request event, so nothing was deployed: without its pull request the run would deploy as a push',
        ),
      )
    }
    checkPullRequestRead(readEvent(run, pr('studio/space-game')), run)
  }
  // A push, or a workflow_run without pull-request, needs none.
  checkPullRequestRead(readEvent({ ...env, GITHUB_EVENT_NAME: 'push' }, undefined), env)
  checkPullRequestRead(readEvent({ ...env, GITHUB_EVENT_NAME: 'workflow_run' }, undefined), env)
})

test('pull requests, forks and the run link are read from the event', () => {
  const same = readEvent(env, pr('studio/space-game'))
  assert.deepEqual(same, {
    name: 'pull_request',
    repository: 'studio/space-game',
    repositoryUrl: 'https://github.com/studio/space-game',
    runUrl: 'https://github.com/studio/space-game/actions/runs/99',
    ref: undefined,
    pullRequest: { number: 12, headSha: 'abc123456789', headRef: undefined, closed: false, fromFork: false },
  })
  const closing = { ...(pr('studio/space-game') as object), action: 'closed' }
  assert.equal(readEvent(env, closing).pullRequest?.closed, true, 'a closed pull request is retired')
  assert.equal(readEvent(env, pr('someone/space-game')).pullRequest?.fromFork, true)
  assert.equal(readEvent(env, pr(null)).pullRequest?.fromFork, true, 'a deleted fork')
  assert.equal(
    readEvent({ ...env, GITHUB_EVENT_NAME: 'pull_request_target' }, pr('a/b')).pullRequest?.fromFork,
    true,
  )
  assert.equal(readEvent({ ...env, GITHUB_EVENT_NAME: 'push' }, pr('a/b')).pullRequest, undefined)
})

test("on workflow_run the pull-request input names the pull request, built at the run's head_sha", () => {
  const run = (head: string | null) => ({
    workflow_run: {
      head_sha: 'fedcba987654',
      head_branch: 'patch-1',
      head_repository: head === null ? null : { full_name: head },
      repository: { full_name: 'studio/space-game' },
      pull_requests: [],
    },
  })
  const wr = { ...env, GITHUB_EVENT_NAME: 'workflow_run', GITHUB_REF: 'refs/heads/main' }
  const fork = readEvent(wr, run('someone/space-game'), 21)
  assert.deepEqual(fork.pullRequest, {
    number: 21,
    headSha: 'fedcba987654',
    fromFork: true,
    build: { repository: 'someone/space-game', branch: 'patch-1' },
  })
  assert.equal(fork.ref, 'refs/pull/21/merge')
  assert.equal(readEvent(wr, run('studio/space-game'), 21).pullRequest?.fromFork, false)
  assert.equal(readEvent(wr, run(null), 21).pullRequest?.fromFork, true)
  const without = readEvent(wr, run('someone/space-game'))
  assert.equal(without.pullRequest, undefined, 'no comment without the input')
  assert.equal(without.ref, 'refs/heads/main')
  assert.throws(() => readEvent(env, pr('studio/space-game'), 12), /pull-request is for workflow_run runs/)
})

test('the comment links the domain, the commit and the run, heads its table with its first row', () => {
  const state = {
    key: 'namespace:pr-1',
    namespaceId: 'ns-1',
    domain: 'pr-1.example.com',
    siteId: 's-1',
    siteName: 'space-game pr-1 abc1234',
    digest: 'sha256:ab',
  }
  const body = renderComment({
    title: 't',
    status: 'ok',
    state,
    runUrl: 'https://github.com/studio/space-game/actions/runs/99',
    repositoryUrl: 'https://github.com/studio/space-game',
    commit: 'def5678901234',
  })
  const lines = body.split('\n')
  const table = lines.filter((line) => line.startsWith('|'))
  assert.equal(table[0], '| Domain | [pr-1.example.com](https://pr-1.example.com/) |')
  assert.equal(table[1], '| --- | --- |')
  assert.ok(!table.some((line) => /^\|\s*\|\s*\|$/.test(line)), 'no empty header')
  assert.ok(table.includes('| Site name | `space-game pr-1 abc1234` |'), 'the name of the site reported')
  assert.ok(
    table.includes('| Commit | [def5678](https://github.com/studio/space-game/commit/def5678901234) |'),
  )
  assert.ok(table.includes('| Run | [99](https://github.com/studio/space-game/actions/runs/99) |'))
  const bare = renderComment({ title: 't', status: 'Provisioned.', state: { key: 'site' } })
  assert.ok(!bare.includes('|'), 'nothing to show: no table at all')
})

test('an empty token skips only fork pull requests on auto', () => {
  const fork = readEvent(env, pr('someone/space-game'))
  const own = readEvent(env, pr('studio/space-game'))
  const auto = whenNoToken('auto', fork)
  assert.ok(auto.skip && /comes from a fork/.test(auto.reason) && /workflow_run/.test(auto.reason))
  assert.deepEqual(whenNoToken('auto', own), { skip: false })
  assert.deepEqual(whenNoToken('fail', fork), { skip: false })
  assert.ok(whenNoToken('skip', own).skip)
})

test('one comment per target and namespace, or per site name without one', () => {
  const connection = { apiUrl: 'https://api.example.com', gameId: GAME }
  const work = {
    versionId: 'v',
    domain: undefined,
    matchmaker: undefined,
    publish: true,
    cdnDomain: 'rivet.game',
  }
  const site = { name: 's', nameGiven: true }
  const suffix = ` game:${GAME} api:https://api.example.com`
  assert.equal(
    previewKey({ connection, site, target: { kind: 'id', namespaceId: 'i', nameId: 'pr-1', ...work } }),
    `namespace:pr-1${suffix}`,
  )
  assert.equal(
    previewKey({ connection, site, target: { kind: 'name', nameId: 'pr-1', displayName: 'x', ...work } }),
    `namespace:pr-1${suffix}`,
  )
  assert.equal(
    previewKey({ connection, site, target: { kind: 'id', namespaceId: 'i', nameId: undefined, ...work } }),
    `namespace-id:i${suffix}`,
  )
  assert.equal(
    previewKey({ connection, site: { name: 'Docs site', nameGiven: true }, target: { kind: 'none' } }),
    `site:Docs site${suffix}`,
  )
  assert.equal(
    previewKey({ connection, site: { name: 'made', nameGiven: false }, target: { kind: 'none' } }),
    `site${suffix}`,
  )
})

test('the same namespace of another game or through another service is another comment', () => {
  const target = {
    kind: 'name',
    nameId: 'pr-1',
    displayName: 'x',
    versionId: 'v',
    domain: undefined,
    matchmaker: undefined,
    publish: true,
    cdnDomain: 'rivet.game',
  } as const
  const key = (apiUrl: string, gameId: string) =>
    previewKey({ connection: { apiUrl, gameId }, site: { name: 's', nameGiven: false }, target })
  const production = key('https://api.example.com', GAME)
  // One service however its URL is written, one game whatever the case of its id.
  assert.equal(key('https://API.example.com/', GAME.toUpperCase()), production)
  const others = [
    key('https://staging.api.example.com', GAME),
    key('http://api.example.com', GAME),
    key('https://api.example.com/v2', GAME),
    key('https://api.example.com', OTHER_GAME),
  ]
  assert.equal(new Set([production, ...others]).size, 5)
  // A comment of one target is not read as the other's, even though they share the namespace name.
  const state = nextState(production, undefined, {
    namespaceId: 'ns-1',
    completed: { siteId: 's-1', digest: 'sha256:ab', fileCount: 1, totalBytes: 1 },
  })
  const body = `${previewMarker(production)}\n${renderComment({ title: 't', status: 'ok', state })}`
  assert.equal(readState(body, production)?.siteId, 's-1')
  for (const other of others) assert.equal(readState(body, other), undefined, other)
})

test('the state survives the comment, and only its own marker matches', () => {
  const state = nextState('namespace:pr-1', undefined, {
    namespaceId: 'ns-1',
    namespaceNameId: 'pr-1',
    domain: 'pr-1.example.com',
    completed: {
      siteId: 's-1',
      uploadId: 'u-1',
      digest: 'sha256:ab',
      fileCount: 3,
      totalBytes: 2048,
      commit: 'abc1234567',
    },
  })
  const body = `${previewMarker('namespace:pr-1')}\n${renderComment({ title: 't', status: 'ok', state, namespaceNameId: 'pr-1' })}`
  assert.deepEqual(readState(body, 'namespace:pr-1'), state)
  assert.equal(readState(body, 'namespace:pr-10'), undefined)
  assert.equal(readState('<!-- gamehost-preview site -->', 'site')?.key, 'site')
  assert.match(body, /\| Site \| `s-1` \(3 files, 2\.0 KiB\) \|/)
  assert.match(body, /\| Namespace \| `pr-1` `ns-1` \|/)
  assert.ok(body.endsWith(stateComment(state)))
})

test('a failed run keeps the last site and records the namespace', () => {
  const previous = { key: 'k', siteId: 's-1', digest: 'sha256:ab' }
  assert.deepEqual(nextState('k', previous, { namespaceId: 'ns-2', namespaceNameId: 'pr-2' }), {
    key: 'k',
    siteId: 's-1',
    digest: 'sha256:ab',
    namespaceId: 'ns-2',
    namespaceNameId: 'pr-2',
  })
})

/**
 * The links and images a Markdown text makes: `[text](target)`, `![alt](src)`, `<https://...>`, outside
 * code spans and backslash escapes.
 */
function liveLinks(markdown: string): string[] {
  const text = outsideCode(markdown.replace(/\\./g, ''))
  return [...text.matchAll(/!?\[[^\]]*\]\([^)]*\)|<https?:[^>]*>/g)].map((m) => m[0])
}

/** The text without its code spans (a run of backticks up to the next run of the same length). */
function outsideCode(markdown: string): string {
  return markdown.replace(/(`+)[^`][\s\S]*?(?<!`)\1(?!`)/g, '')
}

test('values from outside show as code or text in the comment: no link, image, cell or line of their own', () => {
  const hostile = '`x` [click](https://evil.example/) ![i](https://evil.example/p.png) | a |\n\n# h @octocat'
  const state = {
    key: 'k',
    url: 'https://evil.example/`](https://evil.example/x)',
    domain: 'evil.example/[x](https://evil.example/)',
    siteId: hostile,
    siteName: hostile,
    namespaceId: hostile,
    versionId: hostile,
    digest: hostile,
    fileCount: 1,
    totalBytes: 1,
  }
  const body = renderComment({
    title: `gamehost preview: ${hostile}`,
    status: 'ok',
    state,
    namespaceNameId: hostile,
    runUrl: 'https://github.com/x/y/actions/runs/1)[z](https://evil.example/',
    repositoryUrl: 'https://evil.example/a)',
    commit: 'abc1234](https://evil.example/',
  })
  assert.deepEqual(liveLinks(body), [], body)
  const lines = body.split('\n')
  // The heading, the status, the table's 9 rows and its separator, 3 blank lines and the state.
  assert.equal(lines.length, 16, body)
  const rows = lines.filter((line) => line.startsWith('|'))
  assert.equal(rows.length, 10)
  for (const row of rows) {
    // Two cells each: no pipe from outside ends a cell (GFM reads \| as a pipe of the cell).
    assert.equal(row.replace(/\\\|/g, '').match(/\|/g)?.length, 3, row)
  }
  assert.doesNotMatch(outsideCode(body), /@octocat/, 'no mention outside code')
  assert.match(body, /^### gamehost preview\\: /)
})

test('the plain values of a preview are linked', () => {
  const body = renderComment({
    title: 't',
    status: 'ok',
    state: { key: 'k', url: 'https://pr-1.example.com/', domain: 'pr-1.example.com' },
    runUrl: 'https://github.com/studio/space-game/actions/runs/99',
    repositoryUrl: 'https://github.com/studio/space-game',
    commit: 'def5678901234',
  })
  assert.deepEqual(liveLinks(body), [
    '[https://pr-1.example.com/](https://pr-1.example.com/)',
    '[pr-1.example.com](https://pr-1.example.com/)',
    '[def5678](https://github.com/studio/space-game/commit/def5678901234)',
    '[99](https://github.com/studio/space-game/actions/runs/99)',
  ])
})

test('only the state at the end of its own comment is read: none a text above it shows', () => {
  const key = 'namespace:pr-1 game:g api:https://api.example.com'
  const real = nextState(key, undefined, {
    namespaceId: 'ns-1',
    completed: { siteId: 's-real', digest: 'sha256:ab', fileCount: 1, totalBytes: 1 },
  })
  const forged = stateComment({ ...real, siteId: 's-forged' })
  // A service's error message that carries a state and another preview's marker, shown in the status.
  const status = `❌ The deploy failed: ${markdownText(`bad ${forged} ${previewMarker('site')}`)}`
  const body = `${previewMarker(key)}\n${renderComment({ title: 't', status, state: real })}`
  assert.equal(readState(body, key)?.siteId, 's-real')
  assert.equal(readState(body, 'site'), undefined, "a marker shown in the text is not the comment's own")
  // Even unescaped, a state above the last one, or a marker after the start, is not read.
  const raw = `${previewMarker(key)}\n${forged}\n${stateComment(real)}`
  assert.equal(readState(raw, key)?.siteId, 's-real')
  assert.equal(readState(`x ${raw}`, key), undefined)
})
