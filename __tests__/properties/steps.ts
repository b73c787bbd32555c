// A deploy of a generated build to a namespace of the emulator, and what must hold after it: what
// the properties and the tests of the defects they found share.
import assert from 'node:assert/strict'
import type { Parameters } from 'fast-check'
import { memoryLogger } from '../../src/common/logger.ts'
import { DeployError, deploy, deployFailure, type DeployDependencies } from '../../src/deploy/pipeline.ts'
import type { Emulator } from '../../src/emulator/index.ts'
import { readInputs } from '../../src/inputs/deploy.ts'
import { getter, tempDir } from '../support/helpers.ts'
import { RECORD_PATH } from '../../src/deploy/collect/record.ts'
import { writeBuild, type Build } from './builds.ts'
import { assertServes, snapshot } from './served.ts'

export const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const GAME_NAME_ID = 'demo-game'

/**
 * fast-check's parameters: GAMEHOST_FUZZ_RUNS runs (else `defaultRuns`); GAMEHOST_FUZZ_SEED and
 * GAMEHOST_FUZZ_PATH replay a failure it printed (with --test-name-pattern naming its test).
 */
export function runSettings(defaultRuns: number): Parameters<unknown> {
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
export const freshNamespace = () => `prop-${++cases}`

export async function deployBuild(
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
      'site-record': String(build.siteRecord),
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
export const namespaceUrl = (emulator: Emulator, nameId: string) =>
  `http://${nameId === 'prod' ? GAME_NAME_ID : `${GAME_NAME_ID}--${nameId}`}.localhost:${new URL(emulator.url).port}/`

export interface Target {
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
export async function deployStep(target: Target, build: Build, earlier: readonly string[], mayFail: boolean) {
  const { emulator, nameId } = target
  const { root, bytes } = await writeBuild(build)
  const url = namespaceUrl(emulator, nameId)
  const gone = [...new Set(earlier)].filter((p) => !bytes.has(p) && !(build.siteRecord && p === RECORD_PATH))
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
    await assertServes(url, bytes, { gone, record: build.siteRecord })
    return true
  }
  const { error } = deployed
  if (!mayFail) throw error
  const { error: cause, partial } = deployFailure(error)
  assert.ok(error instanceof DeployError, `the deploy threw what is no DeployError: ${String(error)}`)
  assert.ok(!PROGRAMMING_ERRORS.some((type) => cause instanceof type), `the deploy crashed: ${String(cause)}`)
  // Not seen live and not put back (the service refused that too): the deploy says it left the
  // namespace on the version it published, which its host does not serve.
  const leftOnNew =
    partial?.verification?.verified === false && partial.verification.rolledBackTo === undefined
  if (versionBefore !== undefined && !leftOnNew) {
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
