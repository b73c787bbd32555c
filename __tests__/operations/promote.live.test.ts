// Promotion moves the reviewed build, proven, onto the target's own config: against the emulator at its
// defaults (a publish reaches the edge seconds later), through the publish operation as both faces run it.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { request } from 'undici'
import { memoryLogger, type Logger } from '../../src/common/logger.ts'
import { openRun } from '../../src/api/run.ts'
import { deploy } from '../../src/deploy/pipeline.ts'
import type { Emulator } from '../../src/emulator/index.ts'
import { readInputs } from '../../src/inputs/deploy.ts'
import { runOperation } from '../../src/operations/operation.ts'
import { publishOperation } from '../../src/operations/publish.ts'
import { GAME, TOKEN } from '../support/actions.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { getter, tempDir, writeTree } from '../support/helpers.ts'

const PASSWORD = 'reviewers-only-9'
/** The demo game's 0.9.0: a matchmaker other than 1.0.0's, which `prod` serves. */
const OLD_RELEASE = '5a0e7c2d-4b9f-4e1a-8d36-2c7f1b9e4a08'

describe('promotion from a namespace', () => {
  let emulator: Emulator
  let cdn: string
  const connection = () => ({ 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, 'cdn-domain': cdn })
  const built: Record<string, { versionId: string; digest: string; commit?: string }> = {}

  const deployTo = async (namespace: string, title: string, more: Record<string, string> = {}) => {
    const path = await tempDir()
    await writeTree(path, { 'index.html': `<title>${title}</title>`, 'game.js': `// ${title}` })
    const result = await deploy(readInputs(getter({ ...connection(), path, namespace, ...more })), {
      logger: memoryLogger(),
      tempDir: await tempDir(),
      source: { commit: `${title.length}`.padEnd(40, 'a') },
    })
    built[title] = { versionId: result.published!.versionId, digest: result.manifest!.digest }
  }

  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false })
    cdn = emulator.url.replace('127.0.0.1', 'localhost')
    // The preview is made from prod's config (the demo's 1.0.0); prod-p's matchmaker is 0.9.0's.
    await deployTo('pr-12', 'reviewed', { 'basic-auth': `tester:${PASSWORD}` })
    await deployTo('prod-p', 'prod build', { 'version-id': OLD_RELEASE })
    await deployTo('plain', 'no record', { 'site-record': 'false' })
  })
  after(() => emulator.close())

  const publish = (inputs: Record<string, string>, logger: Logger = memoryLogger()) =>
    runOperation(publishOperation, publishOperation.read(getter({ ...connection(), ...inputs })), { logger })

  const readVersionConfig = async (versionId: string) => {
    const run = openRun({
      connection: { apiUrl: emulator.url, token: TOKEN },
      logger: memoryLogger(),
    })
    try {
      return (await run.client.getVersion(GAME, versionId)).version.config
    } finally {
      await run.dispose()
    }
  }
  const liveOf = (nameId: string) => emulator.namespaces(GAME).find((ns) => ns.nameId === nameId)!.versionId
  const namespaceIdOf = (nameId: string) =>
    emulator.namespaces(GAME).find((ns) => ns.nameId === nameId)!.namespaceId
  const get = async (nameId: string, path: string) => {
    const answer = await request(`${emulator.url}${path}`, {
      headers: {
        host: new URL(
          emulator.namespaceUrl(
            GAME,
            emulator.namespaces(GAME).find((ns) => ns.nameId === nameId)!.namespaceId,
          ),
        ).host,
      },
    })
    return { status: answer.statusCode, text: await answer.body.text() }
  }

  test('a private source needs its credentials to be read: refused before any write, naming from-basic-auth', async () => {
    const before = emulator.requests.length
    const prod = liveOf('prod-p')
    await assert.rejects(
      publish({ namespace: 'prod-p', 'from-namespace': 'pr-12' }),
      /its host asks for credentials \(.*answered 401\): give them in from-basic-auth to read which build it serves; nothing was published/,
    )
    assert.equal(liveOf('prod-p'), prod)
    assert.deepEqual(
      emulator.requests.slice(before).filter((r) => r.method !== 'GET'),
      [],
    )
  })

  test('expect-digest of another build: refused before any write', async () => {
    const prod = liveOf('prod-p')
    await assert.rejects(
      publish({
        namespace: 'prod-p',
        'from-namespace': 'pr-12',
        'from-basic-auth': `tester:${PASSWORD}`,
        'expect-digest': built['prod build']!.digest,
      }),
      new RegExp(
        `pr-12 serves build ${built.reviewed!.digest}, not expect-digest ${built['prod build']!.digest}: nothing was published`,
      ),
    )
    await assert.rejects(
      publish({
        namespace: 'prod-p',
        'from-namespace': 'pr-12',
        'from-basic-auth': `tester:${PASSWORD}`,
        'expect-commit': 'ffffffff',
      }),
      /pr-12 serves a build of commit 8a+, not expect-commit ffffffff: nothing was published/,
    )
    assert.equal(liveOf('prod-p'), prod)
  })

  test('a source whose host serves no record of a build: refused, saying how to make one', async () => {
    await assert.rejects(
      publish({ namespace: 'prod-p', 'from-namespace': 'plain' }),
      /its host serves no record of a gamehost build \(.*answered 404\), so what it serves cannot be proven: deploy it with gamehost \(site-record: true\)/,
    )
  })

  test("the reviewed build, on prod's own config: its bytes served to anyone, prod's matchmaker kept, 0 bytes uploaded", async () => {
    const logger = memoryLogger()
    const before = emulator.requests.length
    const prodBefore = await readVersionConfig(liveOf('prod-p'))
    const result = await publish(
      {
        namespace: 'prod-p',
        'from-namespace': 'pr-12',
        'from-basic-auth': `tester:${PASSWORD}`,
        'expect-digest': built.reviewed!.digest,
        'expect-commit': '8aaaaaa',
      },
      logger,
    )
    assert.equal(result.verification?.verified, true, logger.lines.join('\n'))
    const promoted = await readVersionConfig(result.versionId)
    const reviewed = await readVersionConfig(built.reviewed!.versionId)
    assert.equal(promoted.cdn?.site_id, reviewed.cdn?.site_id, "the reviewed build's site")
    assert.deepEqual(
      promoted.matchmaker,
      prodBefore.matchmaker,
      "prod's matchmaker, changed after the preview",
    )
    assert.notDeepEqual(promoted.matchmaker, reviewed.matchmaker)
    const page = await get('prod-p', '/')
    assert.deepEqual(page, { status: 200, text: '<title>reviewed</title>' }, 'served without credentials')
    const calls = emulator.requests.slice(before).map((r) => `${r.method} ${r.path}`)
    assert.deepEqual(
      calls.filter((call) => /^(POST|PUT|PATCH|DELETE) /.test(call)),
      [
        `POST /cloud/games/${GAME}/versions/validate`,
        `POST /cloud/games/${GAME}/versions`,
        `PUT /cloud/games/${GAME}/namespaces/${namespaceIdOf('prod-p')}/version`,
      ],
      'no site, no upload: a version and its publish',
    )
    assert.equal(publishOperation.outputs(result).digest, built.reviewed!.digest)
    assert.equal(publishOperation.outputs(result).commit, '8'.padEnd(40, 'a'))
    const report = JSON.stringify(publishOperation.report(result, undefined as never))
    assert.match(report, new RegExp(`build ${built.reviewed!.digest} \\(commit 8aaaaaa\\) from pr-12`))
    assert.match(report, /0 bytes: the site is the one served there/)
    assert.match(
      logger.lines.join('\n'),
      /Promoting build sha256:\w+ \(commit 8aaaaaa\) from pr-12 .*: 0 bytes to upload/,
    )
  })

  test('promote: version publishes the whole version, and says which of the target config it replaces', async () => {
    const logger = memoryLogger()
    const result = await publish(
      {
        namespace: 'prod-p',
        'from-namespace': 'pr-12',
        'from-basic-auth': `tester:${PASSWORD}`,
        promote: 'version',
      },
      logger,
    )
    assert.equal(result.versionId, built.reviewed!.versionId)
    assert.equal(result.verification?.verified, true, logger.lines.join('\n'))
    assert.match(
      logger.lines.join('\n'),
      /promote: version publishes pr-12's whole version: it replaces prod-p's matchmaker \(as in its current version '[^']+'\) with pr-12's\. promote: build keeps them\./,
    )
  })
})
