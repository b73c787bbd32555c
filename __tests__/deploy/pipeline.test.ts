import assert from 'node:assert/strict'
import { readFile, truncate } from 'node:fs/promises'
import { after, before, describe, test } from 'node:test'
import { UsageError } from '../../src/api/errors.ts'
import type { FileDescriptor } from '../../src/api/types.ts'
import { contentTypeOf } from '../../src/deploy/collect/files.ts'
import { DeployError, deploy, deployFailure } from '../../src/deploy/pipeline.ts'
import { DEFAULT_SEED, fetchLocally, type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { readInputs } from '../../src/inputs/deploy.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { getter, siteFiles, tempDir, writeTree } from '../support/helpers.ts'
import { ServiceClient } from '../../src/api/client.ts'
import { createAgent } from '../../src/api/http.ts'
import { deployOutputs, deployReport } from '../../src/deploy/account.ts'
import { renderText } from '../../src/common/report.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const KiB = 1024
const fast = { sleep: async () => {} }

describe('deploy against the emulator', () => {
  let emulator: Emulator
  let site: string
  let written: Map<string, Buffer>
  let temp: string
  before(async () => {
    emulator = await startTestEmulator()
    site = await tempDir()
    written = await writeTree(site, siteFiles(120, { name: 'build/game.data', size: 700 * KiB + 13 }))
    temp = await tempDir()
  })
  after(() => emulator.close())

  const inputs = (extra: Record<string, string>) =>
    readInputs(getter({ 'api-url': emulator.url, token: 'gamehost-demo-token', 'game-id': GAME, ...extra }), {
      repository: 'studio/space-game',
      ref: 'refs/heads/main',
      sha: 'abcdef0123456789',
    })

  test('provisions, uploads every part, completes: every byte reads back with its content type', async () => {
    const logger = memoryLogger()
    const result = await deploy(
      inputs({
        path: site,
        namespace: 'pipeline',
        'version-id': '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
        domain: 'pipeline.example.com',
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
        'lobby-count-max': '100',
        'max-players': '16',
        concurrency: '4',
      }),
      { logger, tempDir: temp, retry: fast, progressIntervalMs: 5 },
    )
    assert.ok(result.siteId && result.uploadId)
    assert.equal(result.manifest?.fileCount, 121)
    // One PUT per file, as the real service answers for a CDN site (the large file too), and one for
    // the record of the build (site-record).
    assert.equal(result.upload?.parts, 122)
    assert.equal(result.upload?.retries, 0)
    assert.equal(result.siteName, 'space-game main abcdef0')

    const namespace = emulator.namespaces(GAME).find((n) => n.nameId === 'pipeline')
    assert.ok(namespace)
    assert.equal(result.provisioned.namespaceId, namespace.namespaceId)
    assert.deepEqual(namespace.domains, ['pipeline.example.com'])
    assert.equal(result.provisioned.matchmakerValidated, true)

    const view = emulator.site(result.siteId)
    assert.equal(view?.completed, true)
    assert.equal(view?.displayName, 'space-game main abcdef0')
    for (const [path, bytes] of written) {
      const uploaded = await emulator.readUploadedFile(result.siteId, path)
      assert.ok(uploaded.equals(bytes), `${path} reads back identical`)
      const descriptor: FileDescriptor | undefined = view?.files.find((f) => f.path === path)
      assert.equal(descriptor?.content_type, contentTypeOf(path), path)
    }
    const page = await fetch(`${emulator.siteUrl(result.siteId)}index.html`)
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8')
    assert.equal(await page.text(), written.get('index.html')!.toString())

    const manifest = JSON.parse(await readFile(result.manifestPath!, 'utf8')) as {
      digest: string
      files: unknown[]
    }
    assert.equal(manifest.digest, result.manifest?.digest)
    assert.equal(manifest.files.length, 121)

    const groups = logger.lines.filter((l) => l.startsWith('group: '))
    assert.deepEqual(groups, [
      'group: Collect files',
      'group: Provision',
      'group: Upload',
      'group: Publish',
      'group: Verify',
    ])
    // One progress for the files and the record sent after them: it ends on the site's totals.
    const progress = logger.lines.filter((l) => l.startsWith('Uploaded files '))
    assert.match(progress[progress.length - 1]!, /^Uploaded files 122\/122, /)
    assert.ok(!progress.some((l) => l.startsWith('Uploaded files 1/1,')), progress.join('\n'))

    // Live: the new namespace was created on version-id, then the new version of the site was
    // published to it (recorded in its history), and it serves it at the url.
    const published = result.published!
    assert.equal(namespace.versionId, published.versionId)
    assert.equal(published.replacedVersionId, undefined)
    // url is the namespace's own host, under the CDN domain the service names (no cdn-domain given);
    // the custom domain is reported beside it with its state.
    assert.equal(published.url, `http://demo-game--pipeline.localhost:${new URL(emulator.url).port}/`)
    assert.equal(published.domain?.name, 'pipeline.example.com')
    assert.equal(published.domain?.status, result.provisioned.domainStatus?.status)
    assert.equal(deployOutputs(result)['domain-status'], published.domain?.status)
    assert.equal((await fetchLocally(published.url)).text, written.get('index.html')!.toString())
    assert.deepEqual(
      emulator.versionHistory(GAME, namespace.namespaceId).map((h) => h.versionId),
      [published.versionId],
      'the publish after the creation is recorded',
    )
    // The custom domain serves once the service sees its CNAME: pending until then.
    const atDomain = `http://pipeline.example.com:${new URL(emulator.url).port}/`
    assert.equal(published.domain?.status, 'pending')
    assert.equal((await fetchLocally(atDomain)).status, 404)
    emulator.verifyDomain('pipeline.example.com')
    const live = await fetchLocally(atDomain)
    assert.equal(live.status, 200)
    assert.equal(live.text, written.get('index.html')!.toString())
  })

  test('a deploy to an existing namespace publishes a version of the new site, its matchmaker config kept', async () => {
    const client = new ServiceClient({
      baseUrl: emulator.url,
      token: 'gamehost-demo-token',
      logger: memoryLogger(),
      dispatcher: createAgent(),
    })
    const { game } = await client.getGame(GAME)
    const prod = game.namespaces.find((n) => n.name_id === 'prod')!
    const before = (await client.getVersion(GAME, prod.version_id)).version
    const logger = memoryLogger()
    const result = await deploy(
      inputs({
        path: site,
        namespace: 'prod',
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
      }),
      { logger, tempDir: temp, retry: fast },
    )
    const published = result.published!
    assert.equal(published.replacedVersionId, prod.version_id)
    // The site's name is taken by the version of the test before: the service reserves another.
    assert.match(published.versionName, /^\d{4}\.\d{2} \(\d+\)$/)
    const after = (await client.getVersion(GAME, published.versionId)).version
    assert.equal(after.config.cdn?.site_id, result.siteId)
    assert.deepEqual(
      after.config.matchmaker,
      before.config.matchmaker,
      'the matchmaker config survives the deploy',
    )
    assert.deepEqual(
      emulator.versionHistory(GAME, prod.namespace_id).map((h) => h.versionId),
      [published.versionId],
    )
    assert.equal(published.url, `http://demo-game.localhost:${new URL(emulator.url).port}/`)
    const live = await fetchLocally(published.url)
    assert.equal(live.status, 200)
    assert.equal(live.text, written.get('index.html')!.toString())
    assert.deepEqual(deployOutputs(result)['url'], published.url)
    assert.deepEqual(deployOutputs(result)['version-id'], published.versionId)

    // The same site again (a re-run of an unchanged preview): already live, nothing created.
    const again = await deploy(
      inputs({
        path: site,
        namespace: 'prod',
        'skip-unchanged': 'true',
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
      }),
      {
        logger: memoryLogger(),
        tempDir: temp,
        retry: fast,
        previous: { siteId: result.siteId, uploadId: result.uploadId, digest: result.manifest!.digest },
      },
    )
    assert.equal(again.skipped, true)
    assert.equal(again.published?.created, false)
    assert.equal(again.published?.versionId, published.versionId)
  })

  test('publish: false uploads the site only; the namespace keeps its version', async () => {
    const client = new ServiceClient({
      baseUrl: emulator.url,
      token: 'gamehost-demo-token',
      logger: memoryLogger(),
      dispatcher: createAgent(),
    })
    const serving = async () =>
      (await client.getGame(GAME)).game.namespaces.find((n) => n.name_id === 'prod')!.version_id
    const was = await serving()
    const result = await deploy(inputs({ path: site, namespace: 'prod', publish: 'false' }), {
      logger: memoryLogger(),
      tempDir: temp,
      retry: fast,
    })
    assert.ok(result.uploadCompleted)
    assert.equal(result.published, undefined)
    assert.equal(await serving(), was)
  })

  test('an unknown version-id fails before anything is created', async () => {
    const sites = emulator.sites(GAME).length
    const error = await deploy(
      inputs({ path: site, namespace: 'prod', 'version-id': '00000000-0000-4000-8000-000000000000' }),
      { logger: memoryLogger(), tempDir: temp, retry: fast },
    ).catch((e: unknown) => deployFailure(e).error)
    assert.ok(error instanceof UsageError, String(error))
    assert.match(error.message, /^version-id '0{8}-0{4}-4000-8000-0{12}' is not a version of game/)
    assert.equal(emulator.sites(GAME).length, sites)
  })

  test('a domain another namespace holds fails, and the account does not call it attached', async () => {
    const held = DEFAULT_SEED.games[1]!.namespaces![0]!.domains![0]!
    const thrown = await deploy(inputs({ path: site, namespace: 'held-domain', domain: held }), {
      logger: memoryLogger(),
      tempDir: temp,
      retry: fast,
    }).catch((e: unknown) => e)
    assert.ok(thrown instanceof DeployError)
    const { error, partial } = deployFailure(thrown)
    assert.ok(error instanceof UsageError)
    assert.equal(thrown.cause, error)
    assert.equal(thrown.message, error.message)
    assert.match(error.message, /is held by another namespace/)
    assert.ok(partial?.provisioned.namespaceId, 'the namespace created is reported')
    assert.equal(partial.provisioned.domain, undefined, 'the domain was not attached')
  })

  test('a namespace-id the game does not have fails, naming the input, and creates no site', async () => {
    const sitesBefore = emulator.sites(GAME).length
    const { error } = deployFailure(
      await deploy(
        inputs({
          path: site,
          'namespace-id': '00000000-0000-4000-8000-000000000000',
          'lobby-count-max': '10',
          'max-players': '8',
        }),
        { logger: memoryLogger(), tempDir: temp, retry: fast },
      ).catch((e: unknown) => e),
    )
    assert.ok(error instanceof UsageError)
    assert.match(
      error.message,
      /^namespace-id '00000000-0000-4000-8000-000000000000' is not a namespace of game .*: it has prod \(/,
    )
    assert.equal(emulator.sites(GAME).length, sitesBefore)
    // The other game's namespace is not this game's either.
    const other = DEFAULT_SEED.games[1]!.namespaces![0]!.id
    await assert.rejects(
      deploy(inputs({ path: site, 'namespace-id': other }), {
        logger: memoryLogger(),
        tempDir: temp,
        retry: fast,
      }),
      (e: unknown) => {
        const { error } = deployFailure(e)
        return error instanceof UsageError && error.message.includes(`'${other}' is not a namespace of game`)
      },
    )
  })

  test('provisioning only, without path', async () => {
    const result = await deploy(
      inputs({ 'namespace-id': DEFAULT_SEED.games[0]!.namespaces![0]!.id, domain: 'prov.example.com' }),
      {
        logger: memoryLogger(),
        tempDir: temp,
        retry: fast,
      },
    )
    assert.equal(result.siteId, undefined)
    assert.equal(result.manifest, undefined)
    assert.ok(emulator.namespaces(GAME).some((n) => n.domains.includes('prov.example.com')))
  })

  test('a dry run calls nothing and reports the digest a real deploy reports', async () => {
    const before = emulator.requests.length
    const real = await deploy(inputs({ path: site }), {
      logger: memoryLogger(),
      tempDir: temp,
      retry: fast,
    })
    const afterReal = emulator.requests.length
    const dryLogger = memoryLogger()
    const dry = await deploy(inputs({ path: site, 'dry-run': 'true', token: '' }), {
      logger: dryLogger,
      tempDir: temp,
    })
    assert.ok(afterReal > before)
    assert.equal(emulator.requests.length, afterReal, 'the dry run made no call')
    assert.equal(dry.siteId, undefined)
    assert.equal(dry.manifest?.digest, real.manifest?.digest)
    // One request per file: what the service answers for a CDN site.
    assert.equal(dry.plannedParts, dry.manifest?.fileCount)
    assert.ok(
      dryLogger.lines.some((line) =>
        /Would create CDN site .* with 121 files .*: one request per file/.test(line),
      ),
      dryLogger.lines.join('\n'),
    )
  })

  test('the hidden files left out are said in the log, without --verbose, and in the report', async () => {
    const root = await tempDir()
    await writeTree(root, { 'index.html': 'i', '.env': 'SECRET=1', 'js/.eslintrc': '{}', '.cache/x': 'x' })
    const logger = memoryLogger()
    const dry = await deploy(inputs({ path: root, 'dry-run': 'true', token: '' }), {
      logger,
      tempDir: temp,
    })
    const line =
      '2 hidden files and 1 hidden folder left out (include-hidden: true to upload them): .cache/, .env, js/.eslintrc'
    assert.ok(logger.lines.includes(line), logger.lines.join('\n'))
    assert.ok(renderText(deployReport(dry)).includes(line), renderText(deployReport(dry)))
  })

  test('a site of 1 GB or more is refused before any call', async () => {
    const big = await tempDir()
    await writeTree(big, { 'index.html': 'x', 'huge.bin': '' })
    await truncate(`${big}/huge.bin`, 1_000_000_000 - 1)
    const before = emulator.requests.length
    await assert.rejects(
      deploy(inputs({ path: big }), {
        logger: memoryLogger(),
        tempDir: temp,
        retry: fast,
      }),
      (e: unknown) => e instanceof UsageError && /less than 1000000000 bytes/.test(e.message),
    )
    assert.equal(emulator.requests.length, before)
  })
})
