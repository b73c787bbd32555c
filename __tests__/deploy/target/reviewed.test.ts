// reuse-reviewed's matching, against a stand-in CDN that serves each namespace's record by its Host:
// the heads read (and only them), the files hashed only when the counts agree, the site taken from
// the version of the namespace whose whole record is this build, and one line saying why otherwise.
import assert from 'node:assert/strict'
import { hash } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { createAgent } from '../../../src/api/http.ts'
import type { GameVersion, NamespaceSummary } from '../../../src/api/types.ts'
import { memoryLogger } from '../../../src/common/logger.ts'
import { buildManifest, type ArtifactFile, type Manifest } from '../../../src/deploy/collect/files.ts'
import { recordFile } from '../../../src/deploy/collect/record.ts'
import {
  describeRead,
  differingFiles,
  findReviewedBuild,
  namespacesToRead,
  noneOfThatSize,
  parseRecordHead,
  readRecordHead,
  reviewedBytes,
  type ReviewedSearch,
} from '../../../src/deploy/target/reviewed.ts'

const GAME = 'space'

function manifestOf(files: Record<string, string>): Manifest {
  const artifacts = Object.entries(files).map(([path, text]): ArtifactFile => ({
    path,
    absolutePath: `/nowhere/${path}`,
    size: Buffer.byteLength(text),
    mtimeMs: 0,
    dev: 0,
    ino: 0,
  }))
  return buildManifest(
    artifacts,
    Object.values(files).map((text) => hash('sha256', text)),
  )
}

const BUILD = manifestOf({ 'index.html': '<title>v1</title>', 'game.js': 'play(1)' })
/** As many files of the same sizes, one of other bytes: a build that is not byte-reproducible. */
const REBUILT = manifestOf({ 'index.html': '<title>v1</title>', 'game.js': 'play(2)' })
const OTHER = manifestOf({ 'index.html': '<title>another game</title>' })
const recordOf = (manifest: Manifest, ref = 'refs/pull/12/merge') =>
  recordFile(manifest, { commit: 'c'.repeat(40), ref }).bytes

type Answer = { status: number; body?: Buffer } | 'hang' | { head: Buffer }

/** A CDN stand-in: each host (`space--<name>.localhost`, prod's `space.localhost`) answers as `answers` says; it records each Host asked. */
async function startCdn(answers: Map<string, Answer>) {
  const asked: string[] = []
  const hanging = new Set<ServerResponse>()
  let onAsked: ((host: string) => void) | undefined
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const label = (req.headers.host ?? '').split('.')[0]!
    const name = label === GAME ? 'prod' : label.replace(`${GAME}--`, '')
    asked.push(name)
    onAsked?.(name)
    const answer = answers.get(name) ?? { status: 404 }
    if (answer === 'hang') return void hanging.add(res)
    if ('head' in answer) {
      // The head and its line break, then the files never come.
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write(answer.head)
      return void hanging.add(res)
    }
    res.writeHead(answer.status).end(answer.body ?? '')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as AddressInfo).port
  return {
    asked,
    cdnDomain: `http://localhost:${port}`,
    whenAsked: (name: string) =>
      new Promise<void>((resolve) => {
        if (asked.includes(name)) return resolve()
        onAsked = (host) => host === name && resolve()
      }),
    close: async () => {
      for (const res of hanging) res.destroy()
      server.closeAllConnections()
      server.close()
      await once(server, 'close')
    },
  }
}

const namespace = (name: string, created: string, version = `v-${name}`): NamespaceSummary => ({
  namespace_id: `id-${name}`,
  name_id: name,
  display_name: name,
  version_id: version,
  create_ts: created,
})

const versionWithSite = (siteId: string | undefined): { version: GameVersion } => ({
  version: {
    version_id: 'v',
    display_name: 'v',
    create_ts: '2025-01-01T00:00:00Z',
    config: siteId ? { cdn: { site_id: siteId } } : {},
  },
})

describe('reuse-reviewed: finding the namespace that serves this build', () => {
  const agent = createAgent()
  after(() => agent.close())
  let cdn: Awaited<ReturnType<typeof startCdn>>
  const answers = new Map<string, Answer>()
  before(async () => (cdn = await startCdn(answers)))
  after(() => cdn.close())

  const search = (
    namespaces: NamespaceSummary[],
    extra: Partial<ReviewedSearch> = {},
    versions: Array<{ version_id: string; display_name: string }> = [],
  ) => {
    const hashed: number[] = []
    const logger = memoryLogger()
    const read: string[] = []
    const options: ReviewedSearch = {
      client: {
        getVersion: (_game: string, versionId: string) => {
          read.push(versionId)
          return Promise.resolve(versionWithSite(`site-of-${versionId}`))
        },
      },
      gameId: 'game-id',
      game: {
        name_id: GAME,
        namespaces,
        versions: versions.map((v) => ({ ...v, create_ts: '2025-01-01T00:00:00Z' })),
      },
      cdnDomain: cdn.cdnDomain,
      local: { fileCount: BUILD.fileCount, totalBytes: BUILD.totalBytes },
      hash: () => {
        hashed.push(1)
        return Promise.resolve(BUILD)
      },
      host: { dispatcher: agent, signal: new AbortController().signal, stallMs: 5_000 },
      logger,
      ...extra,
    }
    return { options, hashed, logger, versionsRead: read }
  }

  test("the merged pull request's preview serves this build: its site, with its record, and nothing else read", async () => {
    cdn.asked.length = 0
    answers.set('pr-12', { status: 200, body: recordOf(BUILD) })
    answers.set('staging', { status: 200, body: recordOf(OTHER, 'refs/heads/main') })
    const { options, hashed, versionsRead } = search([
      namespace('staging', '2025-01-01T00:00:00Z'),
      namespace('pr-12', '2025-03-01T00:00:00Z'),
    ])
    const found = await findReviewedBuild(options)
    assert.ok('reused' in found, JSON.stringify(found))
    assert.equal(found.reused.nameId, 'pr-12')
    assert.equal(found.reused.siteId, 'site-of-v-pr-12')
    assert.equal(found.reused.digest, BUILD.digest)
    assert.equal(found.reused.commit, 'c'.repeat(40))
    const served = recordOf(BUILD)
    assert.deepEqual(found.reused.record, {
      path: '.well-known/gamehost.json',
      size: served.length,
      sha256: hash('sha256', served),
      contentType: 'application/json; charset=utf-8',
    })
    assert.equal(found.manifest, BUILD)
    assert.equal(hashed.length, 1)
    assert.deepEqual(versionsRead, ['v-pr-12'], "only the matching namespace's version is read")
    assert.deepEqual(
      reviewedBytes({ reusedFrom: 'pr-12', digest: BUILD.digest }),
      `the bytes reviewed in pr-12 (${BUILD.digest})`,
    )
  })

  test('no namespace serves as many files of the same size: the files are not hashed, and the line says what each serves', async () => {
    answers.set('staging', { status: 200, body: recordOf(OTHER, 'refs/heads/main') })
    answers.set('pr-7', { status: 401 })
    const { options, hashed, logger } = search([
      namespace('staging', '2025-01-01T00:00:00Z'),
      namespace('pr-7', '2025-02-01T00:00:00Z'),
    ])
    const found = await findReviewedBuild(options)
    assert.deepEqual(found, {
      unmatched:
        'no namespace serves a build of 2 files and 24 B (staging serves 1 file and 27 B; pr-7 has no record that could be read)',
    })
    assert.equal(hashed.length, 0, 'nothing is hashed before the upload hashes it')
    assert.ok(
      logger.lines.some((l) =>
        l.includes('none from pr-7 (it answered 401: it is private, and read without credentials)'),
      ),
      logger.lines.join('\n'),
    )
  })

  test('a build that is not byte-reproducible: hashed, no site taken, and the line names the file that differs', async () => {
    answers.set('pr-12', { status: 200, body: recordOf(BUILD) })
    const { options, hashed, versionsRead } = search([namespace('pr-12', '2025-03-01T00:00:00Z')], {
      hash: () => {
        hashed.push(1)
        return Promise.resolve(REBUILT)
      },
    })
    const found = await findReviewedBuild(options)
    assert.ok('unmatched' in found)
    assert.equal(
      found.unmatched,
      `pr-12 serves 2 files and 24 B too, but its digest is ${BUILD.digest}, not ${REBUILT.digest}: ` +
        'a file differs (game.js), so it is another build, or one that is not byte-reproducible',
    )
    assert.equal(found.manifest, REBUILT, 'the upload proves its bytes against this manifest')
    assert.equal(hashed.length, 1)
    assert.deepEqual(versionsRead, [])
  })

  test("the target's own site is taken last, and not at all with targetLeftOut; a closed preview is not read", async () => {
    answers.set('prod', { status: 200, body: recordOf(BUILD, 'refs/heads/main') })
    answers.set('staging', { status: 200, body: recordOf(BUILD, 'refs/heads/main') })
    answers.set('pr-3', { status: 200, body: recordOf(BUILD, 'refs/pull/3/merge') })
    const namespaces = [
      namespace('prod', '2025-04-01T00:00:00Z'),
      namespace('staging', '2025-01-01T00:00:00Z'),
      namespace('pr-3', '2025-05-01T00:00:00Z', 'closed-version'),
    ]
    const versions = [{ version_id: 'closed-version', display_name: 'pr-3 closed (#3)' }]
    cdn.asked.length = 0
    const first = await findReviewedBuild(search(namespaces, { target: 'prod' }, versions).options)
    assert.ok('reused' in first)
    assert.equal(first.reused.nameId, 'staging')
    assert.ok(!cdn.asked.includes('pr-3'), cdn.asked.join())

    answers.delete('staging')
    const own = await findReviewedBuild(search(namespaces, { target: 'prod' }, versions).options)
    assert.ok('reused' in own, JSON.stringify(own))
    assert.equal(own.reused.nameId, 'prod')

    cdn.asked.length = 0
    const left = await findReviewedBuild(
      search(namespaces, { target: 'prod', targetLeftOut: true }, versions).options,
    )
    assert.ok('unmatched' in left)
    assert.ok(!cdn.asked.includes('prod'), cdn.asked.join())
  })

  test('a namespace whose version names no site, or whose record lists other files under this digest, is not taken', async () => {
    const forged = Buffer.from(recordOf(BUILD).toString().replace(BUILD.files[0]!.sha256, '0'.repeat(64)))
    answers.set('pr-20', { status: 200, body: forged })
    answers.set('pr-21', { status: 200, body: recordOf(BUILD) })
    const { options } = search([
      namespace('pr-20', '2025-06-01T00:00:00Z'),
      namespace('pr-21', '2025-05-01T00:00:00Z'),
    ])
    options.client = { getVersion: () => Promise.resolve(versionWithSite(undefined)) }
    const found = await findReviewedBuild(options)
    assert.ok('unmatched' in found)
    assert.equal(
      found.unmatched,
      `pr-20's record names this build's digest but other files (${BUILD.files[0]!.path}); ` +
        "pr-21's version v-pr-21 names no site",
    )
  })

  test('the heads are read within the budget: a host that does not answer is left out, and said so', async () => {
    answers.set('slow', 'hang')
    const budget = new AbortController()
    const { options, logger } = search([namespace('slow', '2025-07-01T00:00:00Z')], {
      budget: budget.signal,
    })
    const asked = cdn.whenAsked('slow')
    const finding = findReviewedBuild(options)
    await asked
    budget.abort()
    const found = await finding
    assert.ok('unmatched' in found)
    assert.equal(
      found.unmatched,
      'no namespace serves a build of 2 files and 24 B (slow has no record that could be read)',
    )
    assert.ok(
      logger.lines.some((l) => l.includes('none from slow (it was not read in time)')),
      logger.lines.join('\n'),
    )
  })

  test("a record's first line alone is read: the files after it are never waited for", async () => {
    const whole = recordOf(BUILD)
    answers.set('big', { head: whole.subarray(0, whole.indexOf('\n') + 1) })
    const read = await readRecordHead(`http://${GAME}--big.${cdn.cdnDomain.slice('http://'.length)}/`, {
      dispatcher: agent,
      signal: new AbortController().signal,
      stallMs: 60_000,
    })
    assert.deepEqual(read, {
      head: { digest: BUILD.digest, fileCount: 2, totalBytes: 24, commit: 'c'.repeat(40) },
    })
  })
})

describe('reuse-reviewed: the pieces', () => {
  test("parseRecordHead reads record.ts's first line, and says what is wrong with another", () => {
    const line = recordOf(BUILD).toString().split('\n')[0]!
    assert.deepEqual(parseRecordHead(line), {
      digest: BUILD.digest,
      fileCount: 2,
      totalBytes: 24,
      commit: 'c'.repeat(40),
    })
    assert.equal(parseRecordHead('{"format":1}'), 'does not end where its files begin')
    assert.equal(parseRecordHead('{"format":2,"files":['), 'is not of format 1')
    assert.equal(parseRecordHead('{"format":1,"digest":"sha256:x","files":['), 'has no digest')
    assert.equal(
      parseRecordHead(`{"format":1,"digest":"${BUILD.digest}","fileCount":-1,"totalBytes":3,"files":[`),
      'has no file count or total size',
    )
    assert.equal(parseRecordHead('not json,"files":['), 'is not JSON')
  })

  test('namespacesToRead: newest first, the target last, closed previews left out, each at its host', () => {
    const read = namespacesToRead({
      game: {
        name_id: GAME,
        namespaces: [
          namespace('prod', '2025-01-01T00:00:00Z'),
          namespace('pr-1', '2025-02-01T00:00:00Z', 'closed'),
          namespace('pr-2', '2025-03-01T00:00:00Z'),
          namespace('staging', '2025-01-02T00:00:00Z'),
        ],
        versions: [{ version_id: 'closed', display_name: 'pr-1 closed', create_ts: '2025-01-01T00:00:00Z' }],
      },
      cdnDomain: 'cdn.example',
      target: 'pr-2',
    })
    assert.deepEqual(read, [
      { nameId: 'staging', versionId: 'v-staging', url: `https://${GAME}--staging.cdn.example/` },
      { nameId: 'prod', versionId: 'v-prod', url: `https://${GAME}.cdn.example/` },
      { nameId: 'pr-2', versionId: 'v-pr-2', url: `https://${GAME}--pr-2.cdn.example/` },
    ])
  })

  test('differingFiles names the files of other bytes, else the files the record has that this build has not', () => {
    const record = (m: Manifest) => m.files.map(({ path, size, sha256 }) => ({ path, size, sha256 }))
    assert.deepEqual(differingFiles(BUILD.files, record(BUILD)), [])
    assert.deepEqual(differingFiles(REBUILT.files, record(BUILD)), ['game.js'])
    assert.deepEqual(differingFiles(BUILD.files.slice(0, 1), record(BUILD)), ['index.html'])
  })

  test('the lines list at most five names, and how many more', () => {
    const many = Array.from({ length: 7 }, (_, i) => ({
      nameId: `pr-${i}`,
      versionId: 'v',
      url: 'u',
      head: { digest: BUILD.digest, fileCount: 1, totalBytes: 1 },
    }))
    assert.equal(
      noneOfThatSize({ fileCount: 2, totalBytes: 24 }, many),
      'no namespace serves a build of 2 files and 24 B (pr-0 serves 1 file and 1 B; pr-1 serves 1 file and 1 B; ' +
        'pr-2 serves 1 file and 1 B; pr-3 serves 1 file and 1 B; pr-4 serves 1 file and 1 B; 2 more serve others)',
    )
    assert.equal(
      describeRead(many),
      'Looked for this build in the records that 7 namespaces of the game serve: read from pr-0, pr-1, pr-2, pr-3, pr-4 and 2 more',
    )
  })
})
