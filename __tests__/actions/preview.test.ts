import assert from 'node:assert/strict'
import { test } from 'node:test'
import { readEvent, whenNoToken } from '../../src/actions/event.ts'
import {
  nextState,
  previewKey,
  previewMarker,
  readState,
  renderComment,
  stateComment,
} from '../../src/actions/preview.ts'

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
  assert.ok(table.includes('| Site name | space-game pr-1 abc1234 |'), 'the name of the site reported')
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

test('one comment per namespace, or per site name without one', () => {
  assert.equal(
    previewKey({ namespace: { nameId: 'pr-1', displayName: 'x', versionId: 'v' }, namespaceId: 'i' }, 's'),
    'namespace:pr-1',
  )
  assert.equal(previewKey({ namespace: undefined, namespaceId: 'i' }, 's'), 'namespace-id:i')
  assert.equal(previewKey({ namespace: undefined, namespaceId: undefined }, 'Docs site'), 'site:Docs site')
  assert.equal(previewKey({ namespace: undefined, namespaceId: undefined }, ''), 'site')
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
