// Previews with an age and a cap, counted by pull request: a preview not deployed for longer than
// preview-ttl is retired, open or not; past max-previews the least recently deployed pull requests'
// previews are retired, every `<prefix><number>-<key>` namespace of one pull request counted once and
// retired together. A preview deploy sweeps the others before (the cap) and after, bounded in time,
// never throwing. Ages come from the emulator's clock: a preview "deployed 31 days ago" is deployed
// while the emulator's clock is set 31 days back, and the sweep reads the age as the service gives it.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { memoryLogger } from '../../src/common/logger.ts'
import { fetchLocally, type Emulator } from '../../src/emulator/index.ts'
import { deploy } from '../../src/deploy/pipeline.ts'
import { readInputs } from '../../src/inputs/deploy.ts'
import { previewNumber, readPreviewLimits } from '../../src/inputs/previews.ts'
import { runOperation } from '../../src/operations/operation.ts'
import type { PullRequestState, SweepGitHub } from '../../src/operations/previews.ts'
import { makeRoomForPreview, sweepOtherPreviews } from '../../src/operations/preview-sweep.ts'
import { sweepOperation } from '../../src/operations/sweep.ts'
import { GAME, TOKEN } from '../support/actions.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { deadPort, getter, tempDir, writeTree } from '../support/helpers.ts'

const fast = { sleep: async () => {} }
const HOUR = 3_600_000
const DAY = 24 * HOUR

describe('preview-ttl, max-previews and namespace-prefix are read', () => {
  test('ages in days or hours, 0 for none, a cap of 1 or more', () => {
    const read = (values: Record<string, string>) => readPreviewLimits(getter(values))
    assert.deepEqual(read({}), { prefix: 'pr-', ttlMs: 30 * DAY, maxPreviews: undefined })
    assert.equal(read({ 'preview-ttl': '36h' }).ttlMs, 36 * HOUR)
    assert.equal(read({ 'preview-ttl': '7d' }).ttlMs, 7 * DAY)
    assert.equal(read({ 'preview-ttl': '0' }).ttlMs, undefined)
    assert.equal(read({ 'max-previews': '20' }).maxPreviews, 20)
    for (const bad of ['7', '7days', '-1d', '1.5d', '400d'])
      assert.throws(() => read({ 'preview-ttl': bad }), /preview-ttl '.*' is not an age/, bad)
    assert.throws(() => read({ 'max-previews': '0' }), /max-previews '0' must be a whole number from 1/)
  })

  test("a preview's number: <prefix><number>, or <prefix><number>-<key>", () => {
    assert.equal(previewNumber('pr-12', 'pr-'), 12)
    assert.equal(previewNumber('pr-12-game', 'pr-'), 12)
    assert.equal(previewNumber('pr-12-level-2', 'pr-'), 12)
    for (const other of ['pr-', 'pr-012', 'pr-x', 'pr-12-', 'prod', 'staging', 'pr-12--a'])
      assert.equal(previewNumber(other, 'pr-'), undefined, other)
  })
})

describe('previews with an age and a cap', () => {
  let emulator: Emulator
  let site: string
  let shiftMs = 0
  before(async () => {
    emulator = await startTestEmulator({ now: () => Date.now() + shiftMs })
    site = await tempDir()
    await writeTree(site, { 'index.html': '<title>the game</title>', 'game.js': 'play()' })
  })
  after(() => emulator.close())

  const cdnDomain = () => emulator.url.replace('127.0.0.1', 'localhost')
  const connection = () => ({
    'api-url': emulator.url,
    token: TOKEN,
    'game-id': GAME,
    'cdn-domain': cdnDomain(),
  })
  const host = (name: string) => `http://demo-game--${name}.localhost:${new URL(emulator.url).port}/`
  const deployInputs = (namespace: string, extra: Record<string, string> = {}) =>
    readInputs(getter({ ...connection(), path: site, namespace, ...extra }))

  /** A deploy of pull request `number`'s build to `namespace`, as if `ageMs` ago by the service's clock. */
  async function deployed(namespace: string, number: number, ageMs = 0): Promise<void> {
    shiftMs = -ageMs
    try {
      await deploy(deployInputs(namespace), {
        logger: memoryLogger(),
        tempDir: await tempDir(),
        retry: fast,
        source: { commit: 'abcdef0123456789abcdef0123456789abcdef01', ref: `refs/pull/${number}/merge` },
      })
    } finally {
      shiftMs = 0
    }
  }

  /** GitHub with these pull requests closed (all others open), listing the open ones when `list`. */
  function github(closed: number[], list = false) {
    const asked: number[] = []
    const face: SweepGitHub = {
      pullRequest: async (number) => {
        asked.push(number)
        return { open: !closed.includes(number) }
      },
      ...(list && {
        openPullRequests: async () => {
          const open = new Map<number, PullRequestState>()
          for (let n = 1; n < 100; n++) if (!closed.includes(n)) open.set(n, { open: true })
          return open
        },
      }),
    }
    return { face, asked }
  }

  async function sweep(inputs: Record<string, string>, gitHub = github([])) {
    const operation = sweepOperation(() => gitHub.face)
    const read = operation.read(getter({ ...connection(), 'github-token': 'gh', ...inputs }))
    const logger = memoryLogger()
    const result = await runOperation(operation, read, { logger, retry: fast })
    const outcomes = Object.fromEntries(result.previews.map((p) => [p.namespace, p.outcome]))
    return { result, outcomes, logger }
  }

  test('a preview not deployed for longer than preview-ttl is retired, its pull request open; 0 keeps it', async () => {
    await deployed('a-21', 21, 31 * DAY)
    await deployed('a-22', 22, 29 * DAY)

    const kept = await sweep({ 'namespace-prefix': 'a-', 'preview-ttl': '0' })
    assert.deepEqual(kept.outcomes, { 'a-21': 'open', 'a-22': 'open' })

    const { result, outcomes, logger } = await sweep({ 'namespace-prefix': 'a-' })
    assert.deepEqual(outcomes, { 'a-21': 'retired', 'a-22': 'open' })
    const retired = result.previews.find((p) => p.namespace === 'a-21')!
    assert.equal(retired.retiredBecause?.kind, 'expired')
    assert.ok(
      logger.lines.includes(
        'a-21: it was not deployed for 31 days, longer than preview-ttl: 30d: retiring its preview',
      ),
      logger.lines.join('\n'),
    )
    const page = (await fetchLocally(host('a-21'))).text
    assert.match(page, /The preview of pull request #21 was retired \(it was not deployed for 31 days/)
    assert.match(page, /A push to the pull request \(or a re-run of its deploy\) brings it back/)
    assert.equal((await fetchLocally(host('a-22'))).text, '<title>the game</title>')
  })

  test("past max-previews the least recently deployed pull requests' previews go, a pull request's sites counted once", async () => {
    await deployed('b-31', 31, 5 * HOUR)
    await deployed('b-32-game', 32, 4 * HOUR)
    await deployed('b-33', 33, 3 * HOUR)
    await deployed('b-32-launcher', 32, 2 * HOUR)
    await deployed('b-34', 34, 1 * HOUR)

    const first = await sweep({ 'namespace-prefix': 'b-', 'max-previews': '2' })
    // Four pull requests, two too many: 31 and 33 are the least recently deployed (32's last deploy is
    // its launcher's, two hours ago).
    assert.deepEqual(first.outcomes, {
      'b-31': 'retired',
      'b-32-game': 'open',
      'b-32-launcher': 'open',
      'b-33': 'retired',
      'b-34': 'open',
    })
    const reason = first.result.previews.find((p) => p.namespace === 'b-31')!.retiredBecause
    assert.deepEqual(
      { ...reason, ageMs: undefined },
      { kind: 'over-cap', ageMs: undefined, maxPreviews: 2, live: 4 },
    )
    assert.match(
      (await fetchLocally(host('b-33'))).text,
      /4 previews were live or going live, more than max-previews: 2/,
    )

    const second = await sweep({ 'namespace-prefix': 'b-', 'max-previews': '1' })
    assert.deepEqual(second.outcomes, {
      'b-31': 'already-retired',
      'b-32-game': 'retired',
      'b-32-launcher': 'retired',
      'b-33': 'already-retired',
      'b-34': 'open',
    })
  })

  test("a closed pull request's sites are retired together; the open ones listed at once are not asked about", async () => {
    await deployed('c-41-game', 41)
    await deployed('c-41-launcher', 41)
    await deployed('c-42', 42)
    const gitHub = github([41], true)
    const { outcomes, result } = await sweep({ 'namespace-prefix': 'c-' }, gitHub)
    assert.deepEqual(outcomes, { 'c-41-game': 'retired', 'c-41-launcher': 'retired', 'c-42': 'open' })
    assert.deepEqual(
      gitHub.asked,
      [41],
      'only the pull request the listing does not hold is asked about, once',
    )
    assert.ok(
      result.previews.filter((p) => p.number === 41).every((p) => p.retiredBecause?.kind === 'closed'),
    )
    for (const name of ['c-41-game', 'c-41-launcher'])
      assert.match((await fetchLocally(host(name))).text, /The preview of pull request #41 was closed/)
  })

  test('a preview deployed after the sweep read it is left as it is: what was decided held only for what was read', async () => {
    await deployed('f-71', 71, 40 * DAY)
    // GitHub is asked after the listing and the records were read: a push deploys #71 right then.
    const gitHub: SweepGitHub = {
      pullRequest: async () => ({ open: true }),
      openPullRequests: async () => {
        await deployed('f-71', 71)
        return new Map([[71, { open: true }]])
      },
    }
    const { result, logger } = await sweep({ 'namespace-prefix': 'f-' }, { face: gitHub, asked: [] })
    assert.deepEqual(
      result.previews.map((p) => [p.namespace, p.outcome, p.reason]),
      [['f-71', 'kept', 'it was deployed meanwhile']],
    )
    assert.ok(
      logger.lines.some((l) => /Namespace f-71 was published to meanwhile/.test(l)),
      logger.lines.join('\n'),
    )
    assert.equal((await fetchLocally(host('f-71'))).text, '<title>the game</title>')
  })

  test('a preview deploy makes room before it adds a preview past the cap, and none when it has one already', async () => {
    await deployed('d-51', 51, 2 * HOUR)
    await deployed('d-52', 52, 1 * HOUR)
    const inputs = deployInputs('d-53', { 'namespace-prefix': 'd-', 'max-previews': '2' })
    const logger = memoryLogger()
    const swept = { inputs, pullRequest: 53, github: github([]).face, logger }
    await makeRoomForPreview(swept)
    assert.match(
      (await fetchLocally(host('d-51'))).text,
      /was retired \(3 previews were live or going live, more than max-previews: 2/,
    )
    assert.equal((await fetchLocally(host('d-52'))).text, '<title>the game</title>')

    // Pull request 52's second site: its pull request has a preview, so nothing is retired for it.
    const before = emulator.requests.length
    await makeRoomForPreview({
      ...swept,
      inputs: deployInputs('d-52-b', { 'namespace-prefix': 'd-', 'max-previews': '1' }),
      pullRequest: 52,
    })
    assert.deepEqual(
      // The API's calls: the page fetched just before may be recorded after its answer was read.
      emulator.requests
        .slice(before)
        .filter((r) => !(r.method === 'GET' && r.path === '/'))
        .map((r) => `${r.method} ${r.path}`),
      [`GET /cloud/games/${GAME}`],
      'one listing of the game: no record is read, nothing retired',
    )
    assert.equal((await fetchLocally(host('d-52'))).text, '<title>the game</title>')
  })

  test("a preview deploy's sweep never throws, is bounded in time, and sweeps by age without GitHub", async () => {
    await deployed('e-61', 61, 40 * DAY)
    await deployed('e-62', 62, 40 * DAY)
    const inputs = deployInputs('e-63', { 'namespace-prefix': 'e-' })
    const failing: SweepGitHub = {
      pullRequest: async () => {
        throw new Error('502 Bad Gateway')
      },
      openPullRequests: async () => {
        throw new Error('502 Bad Gateway')
      },
    }
    // No time left: nothing retired, each one said to wait for the next sweep.
    const late = memoryLogger()
    const deferred = await sweepOtherPreviews({
      inputs,
      pullRequest: 63,
      github: failing,
      logger: late,
      budgetMs: 0,
    })
    assert.deepEqual(
      deferred?.map((p) => [p.namespace, p.outcome]),
      [
        ['e-61', 'deferred'],
        ['e-62', 'deferred'],
      ],
    )
    assert.ok(
      late.lines.some((l) => l.includes('2 left for the next sweep')),
      late.lines.join('\n'),
    )
    assert.equal((await fetchLocally(host('e-61'))).text, '<title>the game</title>')

    // GitHub failing: the pull requests are undecided, and the age still retires them.
    const logger = memoryLogger()
    const swept = await sweepOtherPreviews({ inputs, pullRequest: 63, github: failing, logger })
    assert.deepEqual(
      swept?.map((p) => [p.namespace, p.outcome]),
      [
        ['e-61', 'retired'],
        ['e-62', 'retired'],
      ],
    )
    assert.ok(logger.lines.includes('Retired 2 other previews: e-61, e-62'), logger.lines.join('\n'))

    // The service unreachable: a warning, no throw.
    const port = await deadPort()
    const unreachable = readInputs(
      getter({
        ...connection(),
        'api-url': `http://127.0.0.1:${port}`,
        path: site,
        namespace: 'e-63',
        retries: '0',
        'namespace-prefix': 'e-',
      }),
    )
    const warned = memoryLogger()
    assert.equal(
      await sweepOtherPreviews({ inputs: unreachable, pullRequest: 63, github: failing, logger: warned }),
      undefined,
    )
    assert.ok(
      warned.lines.some((l) =>
        /The sweep of the other previews stopped: .*The deploy is not affected/.test(l),
      ),
      warned.lines.join('\n'),
    )
  })
})
