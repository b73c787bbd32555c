// Two runs on one namespace, interleaved as GitHub starts them: one run pauses between two of its
// steps (a wait of its own, on virtual time) while another runs through. The service has no
// conditional write, so each run reads what the namespace is on before it changes it: no rollback
// takes down another run's build, no older build replaces a newer one, and each account says so.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { memoryLogger } from '../../../src/common/logger.ts'
import { deploy, deployFailure, type DeployDependencies } from '../../../src/deploy/pipeline.ts'
import { NotLiveError, putBack } from '../../../src/deploy/live/publish-and-see.ts'
import { PublishedMeanwhileError } from '../../../src/deploy/live/meanwhile.ts'
import { rerunText } from '../../../src/deploy/account.ts'
import { ServiceClient } from '../../../src/api/client.ts'
import { Agent, type Dispatcher } from 'undici'
import type { CommitStatus } from '../../../src/deploy/target/older.ts'
import { startEmulator, type Emulator } from '../../../src/emulator/index.ts'
import { readInputs, type TargetedInputs } from '../../../src/inputs/deploy.ts'
import { closePreview } from '../../../src/deploy/live/close.ts'
import { getter, tempDir, writeTree } from '../../support/helpers.ts'
import { virtualTime } from '../../support/virtual-time.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const TOKEN = 'gamehost-demo-token'
const SEED = 'c'.repeat(40)
const OLD = 'a'.repeat(40)
const NEW = 'b'.repeat(40)
/** One history: each commit follows the one before it. */
const HISTORY = [SEED, OLD, NEW]

/** GitHub's answer, which takes a short commit as well as a whole one. */
const compareCommits = async (base: string, head: string): Promise<CommitStatus> => {
  const at = (commit: string) => HISTORY.findIndex((c) => c.startsWith(commit))
  const [b, h] = [at(base), at(head)]
  return h === b ? 'identical' : h > b ? 'ahead' : 'behind'
}

/** A pool whose request to `path` waits until `meanwhile` has run: a run paused between two steps. */
function pausedAt(path: RegExp, meanwhile: () => Promise<unknown>): Dispatcher {
  let paused: Promise<unknown> | undefined
  return new Agent().compose((dispatch) => (options, handler) => {
    if (!path.test(options.path)) return dispatch(options, handler)
    paused ??= meanwhile()
    void paused.then(() => dispatch(options, handler))
    return true
  })
}

describe('two runs on one namespace', () => {
  let emulator: Emulator
  const time = virtualTime()
  before(async () => {
    // The second publish (run A's, below) never reaches the host.
    emulator = await startEmulator({ rateLimit: false, timer: time.timer, faults: { lostPublishes: [2] } })
  })
  after(() => emulator.close())

  const build = async (title: string) => {
    const dir = await tempDir()
    await writeTree(dir, { 'index.html': `<title>${title}</title>`, 'game.js': `// ${title}` })
    return dir
  }
  const run = async (
    inputs: Record<string, string>,
    commit: string,
    deps: Partial<DeployDependencies> = {},
    logger = memoryLogger(),
    on = emulator,
  ) => {
    const read = readInputs(
      getter({
        'api-url': on.url,
        token: TOKEN,
        'game-id': GAME,
        'cdn-domain': on.url.replace('127.0.0.1', 'localhost'),
        'site-name': `${inputs.namespace} ${commit.slice(0, 7)}`,
        ...inputs,
      }),
    )
    return deploy(read, {
      logger,
      tempDir: await tempDir(),
      sleep: time.sleep,
      clock: time.clock,
      source: { commit, ref: 'refs/heads/main' },
      compareCommits,
      ...deps,
    })
  }
  const live = (nameId: string) => emulator.namespaces(GAME).find((n) => n.nameId === nameId)!.versionId

  test("a run not seen live leaves another run's build live: no rollback over it, and it names it", async () => {
    const seed = await run({ path: await build('seed'), namespace: 'race' }, OLD)
    assert.equal(live('race'), seed.published!.versionId)
    // Run A publishes (the lost publish), then, while it waits to see its build, run B runs through.
    let other: Awaited<ReturnType<typeof run>> | undefined
    const logger = memoryLogger()
    const sleep = async (ms: number, signal?: AbortSignal) => {
      other ??= await run({ path: await build('B'), namespace: 'race' }, NEW)
      return time.sleep(ms, signal)
    }
    const error = await run({ path: await build('A'), namespace: 'race' }, OLD, { sleep }, logger).then(
      () => assert.fail('run A succeeded'),
      (thrown: unknown) => thrown,
    )
    assert.ok(other?.verification?.verified, 'run B was seen live')
    const b = other.published!
    assert.equal(live('race'), b.versionId, "run B's build is still live")
    const { error: cause, partial } = deployFailure(error)
    assert.ok(cause instanceof NotLiveError, String(cause))
    assert.equal(partial!.verification!.rolledBackTo, undefined)
    assert.match(
      cause.message,
      new RegExp(
        `^Not live: another run published version '${b.versionName}' \\(${b.versionId}\\) to the namespace ` +
          `before ${b.url} served this build, after \\d+\\.\\d s \\(\\d+ checks?\\)\\. ` +
          `It was not put back: namespace race serves the other run's build\\.$`,
      ),
    )
    // It stopped at once, not after its verify-timeout.
    assert.ok(partial!.verification!.durationMs < 60_000, `${partial!.verification!.durationMs} ms`)
    assert.match(
      rerunText(partial, cause),
      new RegExp(`The namespace serves version '${b.versionName}' \\(${b.versionId}\\), another run's\\.`),
    )
  })

  for (const verify of ['true', 'false']) {
    test(`a newer build published during an older run's upload (verify ${verify}) is not replaced: the older run publishes nothing`, async () => {
      const namespace = `order-${verify}`
      await run({ path: await build('seed'), namespace }, SEED)
      let newer: Awaited<ReturnType<typeof run>> | undefined
      const runNewer = async () => (newer = await run({ path: await build('new'), namespace, verify }, NEW))
      const logger = memoryLogger()
      const older = await run(
        { path: await build('old'), namespace },
        OLD,
        { dispatcher: pausedAt(/\/cloud\/uploads\/[^/]+\/complete$/, runNewer) },
        logger,
      )
      assert.equal(live(namespace), newer!.published!.versionId, 'the newer build stays published')
      assert.equal(older.published, undefined)
      assert.equal(older.older?.blocked, true)
      assert.match(
        older.older.reason,
        new RegExp(
          `^Namespace ${namespace} serves commit bbbbbbb, newer than this run's aaaaaaa: nothing was published`,
        ),
      )
      assert.ok(
        logger.lines.includes(
          `Another run published version '${namespace} bbbbbbb' (${newer!.published!.versionId}) to namespace ${namespace} meanwhile`,
        ),
        logger.lines.join('\n'),
      )
    })
  }

  test('two first deploys of one pull request at once: one namespace, neither run waits out its timeout, the newer build is live', async () => {
    // An emulator of its own, whose publishes all reach the host.
    const service = await startEmulator({ rateLimit: false, timer: time.timer })
    after(() => service.close())
    const runs = await Promise.allSettled([
      run(
        { path: await build('pull request 9, first push'), namespace: 'pr-9' },
        OLD,
        {},
        memoryLogger(),
        service,
      ),
      run(
        { path: await build('pull request 9, second push'), namespace: 'pr-9' },
        NEW,
        {},
        memoryLogger(),
        service,
      ),
    ])
    const live = (nameId: string) => service.namespaces(GAME).find((n) => n.nameId === nameId)!.versionId
    assert.equal(service.namespaces(GAME).filter((n) => n.nameId === 'pr-9').length, 1)
    const [older, newer] = runs.map((r) =>
      r.status === 'fulfilled' ? r.value : deployFailure(r.reason).partial!,
    )
    assert.equal(runs[1].status, 'fulfilled', runs[1].status === 'rejected' ? String(runs[1].reason) : '')
    assert.equal(live('pr-9'), newer!.published!.versionId)
    // The older run published nothing, or stopped at once naming the newer run's version.
    const seen = older!.verification
    assert.ok(!seen || seen.durationMs < 60_000, `the older run waited ${seen?.durationMs} ms`)
    // It was seen live before the newer run published, or it published nothing, or it stopped at once
    // naming the newer run's version.
    if (runs[0].status === 'rejected') {
      const error = String(deployFailure(runs[0].reason).error)
      assert.match(
        error,
        new RegExp(`another run published version '[^']+' \\(${newer!.published!.versionId}\\)`),
      )
    } else assert.ok(older!.older?.blocked || older!.verification?.verified)
  })

  test("a pull request closed during its deploy's upload keeps its closed page: the deploy publishes nothing", async () => {
    await run({ path: await build('pull request 11'), namespace: 'pr-11' }, OLD)
    const close = () =>
      closePreview(
        readInputs(
          getter({
            'api-url': emulator.url,
            token: TOKEN,
            'game-id': GAME,
            namespace: 'pr-11',
            verify: 'false',
          }),
        ) as TargetedInputs,
        { logger: memoryLogger(), pullRequest: 11 },
      )
    const logger = memoryLogger()
    const late = await run(
      { path: await build('pull request 11, a late push'), namespace: 'pr-11' },
      NEW,
      { dispatcher: pausedAt(/\/cloud\/uploads\/[^/]+\/complete$/, close) },
      logger,
    )
    const closed = emulator.namespaces(GAME).find((n) => n.nameId === 'pr-11')!
    assert.equal(late.published, undefined)
    assert.equal(late.older?.blocked, true)
    assert.match(
      late.older.reason,
      new RegExp(
        `^Namespace pr-11 was closed meanwhile \\(version 'pr-11 closed \\(#11\\)' \\(${closed.versionId}\\)\\): nothing was published`,
      ),
    )
  })

  test("a rollback reads the namespace first, and leaves another run's version as it is", async () => {
    const first = await run({ path: await build('first'), namespace: 'back' }, OLD)
    const second = await run({ path: await build('second'), namespace: 'back' }, OLD)
    // A third run publishes after the second's last check, before its rollback.
    const third = await run({ path: await build('third'), namespace: 'back' }, NEW)
    const agent = new Agent()
    try {
      const client = new ServiceClient({
        baseUrl: emulator.url,
        token: TOKEN,
        dispatcher: agent,
        logger: memoryLogger(),
      })
      const namespaceId = emulator.namespaces(GAME).find((n) => n.nameId === 'back')!.namespaceId
      await assert.rejects(
        putBack(client, GAME, namespaceId, second.published!, memoryLogger()),
        (error: unknown) =>
          error instanceof PublishedMeanwhileError && error.other.versionId === third.published!.versionId,
      )
      assert.equal(live('back'), third.published!.versionId)
      assert.notEqual(first.published!.versionId, third.published!.versionId)
    } finally {
      await agent.close()
    }
  })
})
