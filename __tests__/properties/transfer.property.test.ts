// Property tests of the whole transfer (issue 44): generated builds deployed through the public deploy
// to the emulator, then read back from the namespace's host as a browser would. Runs:
// GAMEHOST_FUZZ_RUNS (default a few, for `npm test`; `npm run fuzz` sets 300); GAMEHOST_FUZZ_SEED and
// GAMEHOST_FUZZ_PATH replay a failure that fast-check printed (with --test-name-pattern naming its test).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { memoryLogger } from '../../src/common/logger.ts'
import { DeployError, deploy, deployFailure, type DeployDependencies } from '../../src/deploy/pipeline.ts'
import type { Emulator, FaultOptions, ScriptedAnswer } from '../../src/emulator/index.ts'
import { routeKeys } from '../../src/emulator/routes/index.ts'
import { readInputs } from '../../src/inputs/deploy.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { getter, tempDir } from '../support/helpers.ts'
import { virtualTime } from '../support/virtual-time.ts'
import {
  GEOMETRIES,
  KNOWN_DEFECT_ATOMS,
  buildsArbitrary,
  writeBuild,
  type Build,
  type Geometry,
} from './builds.ts'
import { assertServes, snapshot } from './served.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const GAME_NAME_ID = 'demo-game'

function runSettings(defaultRuns: number): fc.Parameters<unknown> {
  const runs = Number(process.env.GAMEHOST_FUZZ_RUNS ?? defaultRuns)
  assert.ok(Number.isSafeInteger(runs) && runs > 0, `GAMEHOST_FUZZ_RUNS must be a positive integer`)
  const seed = process.env.GAMEHOST_FUZZ_SEED
  const path = process.env.GAMEHOST_FUZZ_PATH
  return {
    numRuns: runs,
    ...(seed ? { seed: Number(seed) } : {}),
    ...(path ? { path } : {}),
  }
}

let cases = 0
/** A namespace name_id of its own for each case (at most 16 characters). */
const freshNamespace = () => `prop-${++cases}`

async function deployBuild(
  emulator: Emulator,
  root: string,
  build: Build,
  extra: Record<string, string>,
  deps: Partial<DeployDependencies> = {},
) {
  const inputs = readInputs(
    getter({
      'api-url': emulator.url,
      'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
      token: 'gamehost-demo-token',
      'game-id': GAME,
      path: root,
      'include-hidden': String(build.includeHidden),
      ...extra,
    }),
    { repository: 'studio/space-game', ref: 'refs/heads/main', sha: 'abcdef0123456789' },
  )
  return deploy(inputs, {
    logger: memoryLogger(),
    tempDir: await tempDir(),
    retry: { sleep: async () => {} },
    ...deps,
  })
}

/** The namespace's host as the emulator names it (`prod` is the game's own). */
const namespaceUrl = (emulator: Emulator, nameId: string) =>
  `http://${nameId === 'prod' ? GAME_NAME_ID : `${GAME_NAME_ID}--${nameId}`}.localhost:${new URL(emulator.url).port}/`

interface Target {
  emulator: Emulator
  nameId: string
  inputs: Record<string, string>
  deps?: Partial<DeployDependencies>
}

/** What a bug throws, never a refusal or a failure the deploy reports. */
const PROGRAMMING_ERRORS = [TypeError, RangeError, ReferenceError, SyntaxError, assert.AssertionError]

/**
 * Deploys `build` to the target and answers whether the deploy resolved: then the host serves the
 * build and none of the `earlier` paths it lacks. A deploy that `mayFail` and throws leaves the
 * namespace on its version, serving what it served.
 */
async function deployStep(target: Target, build: Build, earlier: readonly string[], mayFail: boolean) {
  const { emulator, nameId } = target
  const { root, bytes } = await writeBuild(build)
  const url = namespaceUrl(emulator, nameId)
  const gone = [...new Set(earlier)].filter((p) => !bytes.has(p))
  const watched = [...bytes.keys(), ...gone]
  const versionOf = () => emulator.namespaces(GAME).find((n) => n.nameId === nameId)?.versionId
  const versionBefore = versionOf()
  const servedBefore = mayFail ? await snapshot(url, watched) : []
  const inputs = { namespace: nameId, ...target.inputs }
  const deployed = await deployBuild(emulator, root, build, inputs, target.deps).then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  )
  if ('result' in deployed) {
    assert.equal(deployed.result.manifest?.fileCount, bytes.size, 'the manifest counts every file')
    assert.equal(deployed.result.published?.url, url, 'published at the namespace')
    assert.equal(versionOf(), deployed.result.published?.versionId, `${nameId} is on the version published`)
    await assertServes(url, bytes, gone)
    return true
  }
  const { error } = deployed
  if (!mayFail) throw error
  const cause = deployFailure(error).error
  assert.ok(error instanceof DeployError, `the deploy threw what is no DeployError: ${String(error)}`)
  assert.ok(!PROGRAMMING_ERRORS.some((type) => cause instanceof type), `the deploy crashed: ${String(cause)}`)
  if (versionBefore !== undefined) {
    assert.equal(versionOf(), versionBefore, `the failed deploy moved ${nameId}: ${String(error)}`)
  }
  const servedAfter = await snapshot(url, watched)
  assert.deepEqual(
    servedAfter,
    servedBefore,
    `the failed deploy changed what ${nameId} serves: ${String(error)}`,
  )
  return false
}

test('property: every generated build is served byte for byte, with its type, and recorded', async () => {
  const emulators = {} as Record<Geometry, Emulator>
  try {
    for (const geometry of Object.keys(GEOMETRIES) as Geometry[]) {
      emulators[geometry] = await startTestEmulator({ ...GEOMETRIES[geometry], rateLimit: false })
    }
    await fc.assert(
      fc.asyncProperty(buildsArbitrary({ maxFiles: 12, maxBuilds: 2 }), async (builds) => {
        const target = { emulator: emulators[builds[0]!.geometry], nameId: freshNamespace(), inputs: {} }
        for (const [i, build] of builds.entries()) {
          await deployStep(
            target,
            build,
            builds.slice(0, i).flatMap((b) => b.files.map((f) => f.path)),
            false,
          )
        }
      }),
      runSettings(12),
    )
  } finally {
    await Promise.all(Object.values(emulators).map((emulator) => emulator.close()))
  }
})

// Found by the property (GAMEHOST_FUZZ_KNOWN_DEFECTS=1): the parser of the site's answer
// (@streamparser/json 0.0.26) drops every U+FEFF of a string, so the service's presigned requests name
// a path the build does not have, and the deploy fails once the site is created. A todo until fixed;
// then KNOWN_DEFECT_ATOMS goes.
test(
  'a file whose name holds U+FEFF is served as any other',
  { todo: 'known defect: U+FEFF is dropped from the paths of the site answer' },
  async () => {
    const emulator = await startTestEmulator({ ...GEOMETRIES.small, rateLimit: false })
    try {
      const files = [
        { path: 'index.html', size: 1, seed: 0 },
        ...KNOWN_DEFECT_ATOMS.map((atom, i) => ({ path: `a${atom}b.txt`, size: 1, seed: i })),
      ]
      const build = { geometry: 'small' as const, includeHidden: false, files }
      await deployStep({ emulator, nameId: freshNamespace(), inputs: {} }, build, [], false)
    } finally {
      await emulator.close()
    }
  },
)

const rate = fc.constantFrom(0, 0, 0.02, 0.05, 0.1, 0.2)
const faultsArbitrary: fc.Arbitrary<FaultOptions> = fc.record({
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  putErrorRate: rate,
  putResetRate: rate,
  // Each stall costs a second (the least request-timeout): in one case of five.
  putStallCount: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, fc.constantFrom(1, 2)),
  putWrongEtagRate: rate,
  apiErrorRate: rate,
  script: fc.dictionary(
    fc.constantFrom(...routeKeys()),
    fc.array(fc.constantFrom<ScriptedAnswer>('429', '503', 'reset'), { minLength: 1, maxLength: 2 }),
    { maxKeys: 2 },
  ),
  // A publish that never reaches the host: the deploy sees it and puts the namespace back.
  lostPublishes: fc.constantFrom([], [], [], [1], [2]),
})

const transferArbitrary = fc.record({
  retries: fc.constantFrom(0, 2, 4, 6, 8),
  concurrency: fc.constantFrom(1, 2, 8),
  target: fc.constantFrom('staging', 'prod', 'fresh'),
})
type Transfer = typeof transferArbitrary extends fc.Arbitrary<infer T> ? T : never

/** Deploys `builds` in turn through an emulator injecting `faults`; counts those that resolved. */
async function deployThroughFaults(builds: readonly Build[], faults: FaultOptions, transfer: Transfer) {
  // The wait for a publish to be served goes by this clock, which moves only when the deploy waits.
  const time = virtualTime(Date.now())
  const emulator = await startTestEmulator({
    ...GEOMETRIES[builds[0]!.geometry],
    rateLimit: false,
    faults,
    timer: time.timer,
  })
  try {
    const target: Target = {
      emulator,
      nameId: transfer.target === 'fresh' ? freshNamespace() : transfer.target,
      inputs: {
        retries: String(transfer.retries),
        concurrency: String(transfer.concurrency),
        // Injected stalls are cut after a second of no progress.
        'request-timeout': '1',
        'verify-timeout': '5',
      },
      deps: { clock: time.clock, sleep: time.sleep },
    }
    let resolved = 0
    for (const [i, build] of builds.entries()) {
      const earlier = builds.slice(0, i).flatMap((b) => b.files.map((f) => f.path))
      if (await deployStep(target, build, earlier, true)) resolved++
    }
    return resolved
  } finally {
    await emulator.close()
  }
}

test('property: through injected faults a deploy serves the build, or fails leaving the namespace as it was', async (t) => {
  const deploys = { resolved: 0, threw: 0 }
  await fc.assert(
    fc.asyncProperty(
      buildsArbitrary({ maxFiles: 8, maxBuilds: 2 }),
      faultsArbitrary,
      transferArbitrary,
      async (builds, faults, transfer) => {
        const resolved = await deployThroughFaults(builds, faults, transfer)
        deploys.resolved += resolved
        deploys.threw += builds.length - resolved
      },
    ),
    runSettings(8),
  )
  t.diagnostic(`deploys that resolved: ${deploys.resolved}, that threw: ${deploys.threw}`)
})
