// Two runs of one preview at once (a push and a re-run, two workflows on one pull request): each
// reads the comments, finds none, and comments at its end. One comment must be left, the oldest.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { stickyComment } from '../../src/actions/comment.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { startGitHubStub } from '../support/github-api.ts'

const REPO = 'studio/game'
const github = await startGitHubStub({
  'gh-bot': { user: { login: 'github-actions[bot]', type: 'Bot' }, canComment: true },
})
process.env.GITHUB_API_URL = github.url
after(() => github.close())

const run = (issue: number) => {
  const logger = memoryLogger()
  const sticky = stickyComment({ token: 'gh-bot', repository: REPO, issue, key: 'namespace:pr-7', logger })
  return { sticky, logger }
}
const ours = (issue: number) =>
  github.comments(REPO, issue).filter((c) => c.body.includes('gamehost-preview'))
const posts = (issue: number) =>
  github.requests.filter((r) => r.method === 'POST' && r.path === `/repos/${REPO}/issues/${issue}/comments`)
const lastLine = (body: string) => body.split('\n').pop()
const warnings = (logger: ReturnType<typeof memoryLogger>) =>
  logger.lines.filter((l) => l.startsWith('warning'))

test('two saves at once, after both found no comment: one comment is left, the oldest', async () => {
  const first = run(41)
  const second = run(41)
  assert.equal(await first.sticky.load(), undefined)
  assert.equal(await second.sticky.load(), undefined)
  await Promise.all([first.sticky.save('first run'), second.sticky.save('second run')])
  assert.equal(posts(41).length, 2, 'each run created a comment')
  const left = ours(41)
  assert.equal(left.length, 1, left.map((c) => c.body).join('\n---\n'))
  const deleted = github.requests
    .filter((r) => r.method === 'DELETE' && r.status === 204)
    .map((r) => Number(r.path.split('/').pop()))
  assert.equal(deleted.length, 1, 'the newer comment was deleted')
  assert.ok(deleted[0]! > left[0]!.id, 'the oldest stayed')
  assert.match(lastLine(left[0]!.body)!, /^(first|second) run$/)
  assert.deepEqual([...warnings(first.logger), ...warnings(second.logger)], [])
  // Both runs now know the comment that stayed: their next saves edit it.
  await first.sticky.save('first run, again')
  await second.sticky.save('second run, again')
  assert.deepEqual(
    ours(41).map((c) => [c.id, lastLine(c.body)]),
    [[left[0]!.id, 'second run, again']],
  )
})

test("the later of two runs finds the earlier run's comment: it updates that one and removes its own", async () => {
  const first = run(42)
  const second = run(42)
  await first.sticky.load()
  await second.sticky.load()
  await first.sticky.save('first run')
  const [kept] = ours(42)
  await second.sticky.save('second run')
  assert.deepEqual(
    ours(42).map((c) => [c.id, lastLine(c.body)]),
    [[kept!.id, 'second run']],
  )
  assert.ok(second.logger.lines.some((l) => l.includes('at the same time: its comment was updated')))
  assert.deepEqual(warnings(second.logger), [])
})

test("someone else's comment with the marker is neither kept nor removed", async () => {
  const planted = github.addComment(REPO, 43, '<!-- gamehost-preview namespace%3Apr-7 -->\nplanted', {
    login: 'mallory',
    type: 'User',
  })
  const only = run(43)
  await only.sticky.load()
  await only.sticky.save('the run')
  assert.deepEqual(
    github.comments(REPO, 43).map((c) => [c.id, lastLine(c.body)]),
    [
      [planted.id, 'planted'],
      [ours(43)[1]!.id, 'the run'],
    ],
  )
})
