import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { utimes, writeFile } from 'node:fs/promises'
import type http from 'node:http'
import path from 'node:path'
import { after, test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { SLOW_START } from '../../src/deploy/adaptive.ts'
import { createAgent } from '../../src/api/http.ts'
import { retryPolicy } from '../../src/common/retry.ts'
import type { PresignedRequest } from '../../src/api/types.ts'
import { type ArtifactFile } from '../../src/deploy/files.ts'
import { scanArtifacts } from '../../src/deploy/scan.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { timeoutsFor } from '../../src/common/timeouts.ts'
import { PresignedRequestList } from '../../src/api/presigned.ts'
import { PartUploadError, planUpload, uploadParts, type UploadOptions } from '../../src/deploy/upload.ts'
import { fakeStore, md5, onePutPerFile } from '../support/fake-store.ts'
import { collectArtifacts, tempDir, writeTree } from '../support/helpers.ts'

const agent = createAgent()
after(() => agent.close())

/** The manifest of every file under `root`. */
function collectSite(root: string) {
  return collectArtifacts({
    root,
    patterns: ['**'],
    includeHidden: false,
    logger: memoryLogger(),
  })
}

/** A site of `count` small files named f0.txt, f1.txt, ... (and `more`). */
async function smallFiles(count: number, more: Record<string, string> = {}): Promise<ArtifactFile[]> {
  const root = await tempDir()
  await writeTree(root, {
    ...Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}.txt`, `file ${i}`])),
    ...more,
  })
  return (await collectSite(root)).files
}

async function oneFileSite(content: string) {
  const root = await tempDir()
  await writeTree(root, { 'a.txt': content })
  const manifest = await collectSite(root)
  return { root, manifest }
}

function requestFor(url: string, size: number): PresignedRequest[] {
  return [
    { path: 'a.txt', url: `${url}/put?X-Signature=secret-signature`, byte_offset: 0, content_length: size },
  ]
}

/** uploadParts of oneFileSite's one file to `url`: one PUT at a time, retries without waiting. */
function uploadOneFile(files: ArtifactFile[], url: string, overrides: Partial<UploadOptions> = {}) {
  return uploadParts({
    files,
    requests: PresignedRequestList.of(requestFor(url, 5)),
    dispatcher: agent,
    concurrency: 1,
    retry: retryPolicy({ sleep: async () => {} }),
    timeouts: timeoutsFor(5000),
    logger: memoryLogger(),
    ...overrides,
  })
}

test('a PUT that makes no progress is aborted after request-timeout and retried', async () => {
  const { manifest } = await oneFileSite('hello')
  const store = await fakeStore((_req, body, res, attempt) => {
    if (attempt === 1) return // never answers
    res.writeHead(200, { etag: `"${md5(body)}"` }).end()
  })
  const logger = memoryLogger()
  const result = await uploadOneFile(manifest.files, store.url, {
    concurrency: 2,
    timeouts: timeoutsFor(150),
    logger,
  })
  assert.equal(store.attempts(), 2)
  assert.equal(result.retries, 1)
  const retried = logger.lines.find((l) => l.includes('retry 1 of 8')) ?? ''
  assert.ok(retried.startsWith('Upload of a.txt: '), retried)
  assert.ok(!retried.startsWith('Upload of a.txt: Upload of a.txt'), `the file named once: ${retried}`)
})

test('an ETag that is not the MD5 of the bytes sent is retried, then fails naming the part', async () => {
  const { manifest } = await oneFileSite('hello')
  const store = await fakeStore((_req, _body, res) =>
    res.writeHead(200, { etag: `"${md5(Buffer.from('other'))}"` }).end(),
  )
  const logger = memoryLogger()
  const error = await uploadOneFile(manifest.files, store.url, {
    retry: retryPolicy({ retries: 2, sleep: async () => {} }),
    logger,
  }).catch((e: unknown) => e)
  assert.ok(error instanceof PartUploadError)
  assert.match(
    error.message,
    /^Upload of a\.txt: the store's ETag "[0-9a-f]{32}" is not the MD5 of the bytes sent/,
  )
  assert.equal(store.attempts(), 3)
  assert.ok(!logger.lines.join('\n').includes('secret-signature'), 'the presigned URL is never logged')
})

test('a 403 from the store is not retried, and its XML error is shown', async () => {
  const { manifest } = await oneFileSite('hello')
  const store = await fakeStore((_req, _body, res) =>
    res
      .writeHead(403, { 'content-type': 'application/xml' })
      .end(
        '<?xml version="1.0"?><Error><Code>SignatureDoesNotMatch</Code><Message>bad signature</Message></Error>',
      ),
  )
  const error = await uploadOneFile(manifest.files, store.url).catch((e: unknown) => e)
  assert.ok(error instanceof PartUploadError)
  assert.equal(error.message, 'Upload of a.txt: the store answered 403 SignatureDoesNotMatch: bad signature')
  assert.equal(store.attempts(), 1)
})

test('a file that changed after it was hashed fails the upload before completion', async () => {
  const { root, manifest } = await oneFileSite('hello')
  const store = await fakeStore((_req, body, res) => res.writeHead(200, { etag: `"${md5(body)}"` }).end())
  await utimes(path.join(root, 'a.txt'), new Date(), new Date(Date.now() + 5000))
  await assert.rejects(
    uploadOneFile(manifest.files, store.url),
    /^Error: a\.txt changed while it was uploaded/,
  )
})

test('a file changed while other files upload is caught when its own bytes are read, and an empty file no request asks for is checked too', async () => {
  const root = await tempDir()
  await writeTree(root, { 'a.txt': 'hello', 'b.txt': 'world', 'empty.txt': '' })
  const manifest = await collectSite(root)
  const requests = (url: string): PresignedRequest[] =>
    ['a.txt', 'b.txt'].map((name) => ({
      path: name,
      url: `${url}/${name}`,
      byte_offset: 0,
      content_length: 5,
    }))
  const upload = (url: string) =>
    uploadParts({
      files: manifest.files,
      requests: PresignedRequestList.of(requests(url)),
      dispatcher: agent,
      concurrency: 1,
      retry: retryPolicy({ sleep: async () => {} }),
      timeouts: timeoutsFor(5000),
      logger: memoryLogger(),
    })
  // The other file is touched while the first PUT is on the wire (whichever file that sends), so it
  // is read after it changed.
  let touched: string | undefined
  let store = await fakeStore((req, body, res) => {
    const answer = () => res.writeHead(200, { etag: `"${md5(body)}"` }).end()
    if (touched) return answer()
    touched = req.url === '/a.txt' ? 'b.txt' : 'a.txt'
    void utimes(path.join(root, touched), new Date(), new Date(Date.now() + 5000)).then(answer)
  })
  const error = await upload(store.url).catch((e: unknown) => e)
  assert.ok(error instanceof Error)
  assert.equal(error.message.split(' changed while')[0], touched)
  assert.equal(store.attempts(), 1, 'the changed file is not sent')
  const fresh = await collectSite(root)
  manifest.files.splice(0, manifest.files.length, ...fresh.files)
  // The empty file has no request: it is checked after the PUTs.
  await utimes(path.join(root, 'empty.txt'), new Date(), new Date(Date.now() + 9000))
  store = await fakeStore((_req, body, res) => res.writeHead(200, { etag: `"${md5(body)}"` }).end())
  await assert.rejects(upload(store.url), /^Error: empty\.txt changed while it was uploaded/)
})

test('a file changed after its bytes were read and checked is stored as read: the bytes sent are the ones the manifest names', async () => {
  const { root, manifest } = await oneFileSite('hello')
  const store = await fakeStore((_req, body, res) => {
    void utimes(path.join(root, 'a.txt'), new Date(), new Date(Date.now() + 5000)).then(() =>
      res.writeHead(200, { etag: `"${md5(body)}"` }).end(),
    )
  })
  await uploadOneFile(manifest.files, store.url)
  assert.equal(store.attempts(), 1)
})

test('presigned requests must cover exactly the files of the site', async () => {
  const { manifest } = await oneFileSite('hello')
  assert.throws(
    () =>
      planUpload(
        manifest.files,
        PresignedRequestList.of([{ path: 'other', url: 'u', byte_offset: 0, content_length: 1 }]),
      ),
    /not a file of this site/,
  )
  assert.throws(
    () =>
      planUpload(
        manifest.files,
        PresignedRequestList.of([{ path: 'a.txt', url: 'u', byte_offset: 3, content_length: 5 }]),
      ),
    /which has 5/,
  )
  assert.throws(
    () =>
      planUpload(
        manifest.files,
        PresignedRequestList.of([{ path: 'a.txt', url: 'u', byte_offset: 0, content_length: 4 }]),
      ),
    /cover 4 of its 5 bytes/,
  )
  const plan = planUpload(
    manifest.files,
    PresignedRequestList.of([
      { path: 'a.txt', url: 'u1', byte_offset: 0, content_length: 3 },
      { path: 'a.txt', url: 'u2', byte_offset: 3, content_length: 2 },
    ]),
  )
  assert.equal(plan.parts.length, 2)
  assert.equal(plan.partCount[0], 2)
  assert.deepEqual(
    plan.parts.map((p) => [p.index, p.file.path, p.fileIndex, p.number, p.of]),
    [
      [0, 'a.txt', 0, 1, 2],
      [1, 'a.txt', 0, 2, 2],
    ],
  )
})

test('the upload gives each SHA-256 from the bytes it sends, for whole files and for parts', async () => {
  const root = await tempDir()
  const written = await writeTree(root, { 'a.txt': 'hello', 'big.bin': 3000, 'empty.txt': '' })
  const scanned = await scanArtifacts({
    root,
    patterns: ['**'],
    includeHidden: false,
    logger: memoryLogger(),
  })
  assert.ok(
    scanned.every((f) => !('sha256' in f)),
    'the scan hashes nothing',
  )
  const store = await fakeStore((_req, body, res) => res.writeHead(200, { etag: `"${md5(body)}"` }).end())
  const url = (p: string) => `${store.url}/put?p=${p}`
  const result = await uploadParts({
    files: scanned,
    requests: PresignedRequestList.of([
      { path: 'a.txt', url: url('a'), byte_offset: 0, content_length: 5 },
      { path: 'big.bin', url: url('b1'), byte_offset: 0, content_length: 1024 },
      { path: 'big.bin', url: url('b2'), byte_offset: 1024, content_length: 1024 },
      { path: 'big.bin', url: url('b3'), byte_offset: 2048, content_length: 952 },
    ]),
    dispatcher: agent,
    concurrency: 3,
    retry: retryPolicy({ sleep: async () => {} }),
    timeouts: timeoutsFor(5000),
    logger: memoryLogger(),
  })
  const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex')
  assert.deepEqual(Object.fromEntries(scanned.map((f, i) => [f.path, result.sha256?.[i]])), {
    'a.txt': sha256(written.get('a.txt')!),
    'big.bin': sha256(written.get('big.bin')!),
    // No request asks for it, and it is given the SHA-256 of no bytes all the same.
    'empty.txt': sha256(Buffer.alloc(0)),
  })
  assert.equal(store.attempts(), 4)
})

test('a file in parts rewritten with the same size and time once a part was sent fails naming it, after every part', async () => {
  const root = await tempDir()
  const written = await writeTree(root, { 'big.bin': 3000 })
  const when = new Date('2026-01-02T03:04:05Z')
  await utimes(path.join(root, 'big.bin'), when, when)
  const { files } = await collectSite(root)
  let rewritten = false
  // The first part stored rewrites the file (every byte flipped, its time set back): whatever the
  // order of the parts, one was sent as it was and the read after the last one sees the new bytes.
  const store = await fakeStore((_req, body, res) => {
    const answer = () => res.writeHead(200, { etag: `"${md5(body)}"` }).end()
    if (rewritten) return answer()
    rewritten = true
    const flipped = Buffer.from(written.get('big.bin')!.map((b) => b ^ 0xff))
    void writeFile(path.join(root, 'big.bin'), flipped)
      .then(() => utimes(path.join(root, 'big.bin'), when, when))
      .then(answer)
  })
  const url = (p: string) => `${store.url}/put?p=${p}`
  const error = await uploadParts({
    files,
    requests: PresignedRequestList.of([
      { path: 'big.bin', url: url('b1'), byte_offset: 0, content_length: 1024 },
      { path: 'big.bin', url: url('b2'), byte_offset: 1024, content_length: 1024 },
      { path: 'big.bin', url: url('b3'), byte_offset: 2048, content_length: 952 },
    ]),
    dispatcher: agent,
    concurrency: 1,
    retry: retryPolicy({ sleep: async () => {} }),
    timeouts: timeoutsFor(5000),
    logger: memoryLogger(),
  }).catch((e: unknown) => e)
  assert.ok(error instanceof Error)
  assert.match(
    error.message,
    /^big\.bin changed while it was uploaded: part 1\/3 as sent is not what the file holds now/,
  )
  assert.equal(store.attempts(), 3)
})

test('a file hashed before the upload must be sent as hashed: another digest fails naming it', async () => {
  const { manifest } = await oneFileSite('hello')
  const store = await fakeStore((_req, body, res) => res.writeHead(200, { etag: `"${md5(body)}"` }).end())
  const sha256 = createHash('sha256').update('hello').digest('hex')
  const result = await uploadOneFile(manifest.files, store.url, { expected: [sha256] })
  assert.deepEqual(result.sha256, [sha256])
  await assert.rejects(
    uploadOneFile(manifest.files, store.url, {
      expected: [createHash('sha256').update('hellp').digest('hex')],
    }),
    /^Error: a\.txt changed while it was uploaded: the bytes sent are not the ones hashed before the upload/,
  )
})

test('small files read one after another each send exactly their own bytes', async () => {
  const root = await tempDir()
  // One at a time, larger first, then, as the earliest-expiring URL goes first, a 40,000-byte file
  // after a 100-byte one: no PUT sends another's bytes.
  const written = await writeTree(root, {
    'tiny.txt': 100,
    'large.bin': 40_000,
    'mid.bin': 9000,
    'small.bin': 3000,
  })
  const scanned = await scanArtifacts({
    root,
    patterns: ['**'],
    includeHidden: false,
    logger: memoryLogger(),
  })
  const received = new Map<string, Buffer>()
  const order: string[] = []
  const store = await fakeStore((req, body, res) => {
    const name = new URL(req.url!, store.url).searchParams.get('p')!
    received.set(name, body)
    order.push(name)
    res.writeHead(200, { etag: `"${md5(body)}"` }).end()
  })
  const url = (name: string, expires: number) =>
    `${store.url}/put?p=${name}&X-Amz-Date=20261123T120000Z&X-Amz-Expires=${expires}`
  const result = await uploadParts({
    files: scanned,
    requests: PresignedRequestList.of(
      scanned.map((f) => ({
        path: f.path,
        url: url(f.path, f.path === 'tiny.txt' ? 60 : 3600),
        byte_offset: 0,
        content_length: f.size,
      })),
    ),
    dispatcher: agent,
    concurrency: 1,
    retry: retryPolicy({ sleep: async () => {} }),
    timeouts: timeoutsFor(5000),
    logger: memoryLogger(),
  })
  assert.deepEqual(order, ['tiny.txt', 'large.bin', 'mid.bin', 'small.bin'])
  for (const [name, bytes] of written) assert.ok(received.get(name)?.equals(bytes), name)
  const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex')
  scanned.forEach((file, i) => assert.equal(result.sha256?.[i], sha256(written.get(file.path)!), file.path))
})

// Bounded only so that an upload that never reaches the wanted number of PUTs fails instead of hanging.
test(
  'an upload starts with SLOW_START PUTs in flight below a higher concurrency, then rises past it',
  { timeout: 60_000 },
  async () => {
    const root = await tempDir()
    const names = Array.from({ length: SLOW_START + 48 }, (_, i) => `f${i}.txt`)
    await writeTree(root, Object.fromEntries(names.map((n) => [n, n])))
    const scanned = await scanArtifacts({
      root,
      patterns: ['**'],
      includeHidden: false,
      logger: memoryLogger(),
    })
    // No answer until SLOW_START PUTs arrived: what arrives before the first answer is what the upload
    // sent at once. Each step waits on what the store has seen, not on the clock.
    const held: (() => void)[] = []
    let sentAtOnce = 0
    let inFlight = 0
    let most = 0
    let answering = false
    const store = await fakeStore((_req, body, res) => {
      inFlight++
      most = Math.max(most, inFlight)
      const answer = () => {
        // Answered after a moment, so that later PUTs overlap.
        setTimeout(() => {
          inFlight--
          res.writeHead(200, { etag: `"${md5(body)}"` }).end()
        }, 5)
      }
      if (answering) answer()
      else held.push(answer)
    })
    const until = async (condition: () => boolean) => {
      while (!condition()) await delay(1)
    }
    const conducted = (async () => {
      await until(() => held.length >= SLOW_START)
      // A moment for a PUT beyond SLOW_START to arrive: one would fail the test, its absence cannot.
      await delay(50)
      sentAtOnce = held.length
      // One answer: a PUT stored lets the upload rise past its start while the others are held.
      held.shift()!()
      await until(() => inFlight > SLOW_START)
      answering = true
      for (const answer of held.splice(0)) answer()
    })()
    await uploadParts({
      files: scanned,
      requests: PresignedRequestList.of(onePutPerFile(scanned, store.url)),
      dispatcher: agent,
      concurrency: SLOW_START + 64,
      retry: retryPolicy({ sleep: async () => {} }),
      timeouts: timeoutsFor(5000),
      logger: memoryLogger(),
    })
    await conducted
    assert.ok(sentAtOnce > 0 && sentAtOnce <= SLOW_START, `${sentAtOnce} PUTs sent before any answer`)
    assert.ok(most > SLOW_START, `at most ${most} in flight`)
  },
)

test('a file of more than 1 MiB sent as one PUT is streamed and hashed (MD5 and SHA-256) from the bytes sent', async () => {
  const root = await tempDir()
  const size = 3 * 1024 * 1024 + 7
  const written = await writeTree(root, { 'big.bin': size })
  const scanned = await scanArtifacts({
    root,
    patterns: ['**'],
    includeHidden: false,
    logger: memoryLogger(),
  })
  let received: Buffer | undefined
  const store = await fakeStore((_req, body, res) => {
    received = body
    res.writeHead(200, { etag: `"${md5(body)}"` }).end()
  })
  const result = await uploadParts({
    files: scanned,
    requests: PresignedRequestList.of([
      { path: 'big.bin', url: `${store.url}/put?p=big`, byte_offset: 0, content_length: size },
    ]),
    dispatcher: agent,
    concurrency: 4,
    retry: retryPolicy({ sleep: async () => {} }),
    timeouts: timeoutsFor(5000),
    logger: memoryLogger(),
  })
  assert.deepEqual(received, written.get('big.bin'))
  assert.deepEqual(result.sha256, [createHash('sha256').update(written.get('big.bin')!).digest('hex')])
  assert.equal(result.bytes, size)
  assert.equal(store.attempts(), 1)
})

test('an aborted signal starts no new PUT, aborts those in flight and rejects with its reason', async () => {
  const manifest = { files: await smallFiles(20) }
  let arrived = 0
  let closed = 0
  const controller = new AbortController()
  const store = await fakeStore((req, _body, res) => {
    arrived++
    res.on('close', () => closed++)
    // Never answers: the PUTs stay in flight until the upload aborts them.
    if (arrived === 3) controller.abort(new Error('the run was cancelled'))
    void req
  })
  const error = await uploadParts({
    files: manifest.files,
    requests: PresignedRequestList.of(onePutPerFile(manifest.files, store.url)),
    dispatcher: agent,
    concurrency: 3,
    retry: retryPolicy({ sleep: async () => {} }),
    timeouts: timeoutsFor(60_000),
    logger: memoryLogger(),
    signal: controller.signal,
  }).catch((e: unknown) => e)
  assert.ok(error instanceof Error)
  assert.equal(error.message, 'the run was cancelled')
  // Let the aborted connections reach the store.
  for (let i = 0; i < 50 && closed < 3; i++) await new Promise((r) => setTimeout(r, 10))
  assert.equal(closed, 3, 'the 3 PUTs in flight were aborted')
  assert.equal(arrived, 3, 'no PUT started after the abort')
})

test('an upload given an already aborted signal sends nothing', async () => {
  const { manifest } = await oneFileSite('hello')
  const store = await fakeStore((_req, body, res) => res.writeHead(200, { etag: `"${md5(body)}"` }).end())
  const reason = new Error('cancelled before the upload')
  await assert.rejects(
    uploadOneFile(manifest.files, store.url, { concurrency: 2, signal: AbortSignal.abort(reason) }),
    (e) => e === reason,
  )
  assert.equal(store.attempts(), 0)
})

test('503 SlowDown from the store halves the uploads in flight, and they are retried', async () => {
  const manifest = { files: await smallFiles(40) }
  const store = await fakeStore((_req, body, res, attempt) => {
    if (attempt <= 4) {
      res
        .writeHead(503, { 'content-type': 'application/xml' })
        .end('<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>')
      return
    }
    res.writeHead(200, { etag: `"${md5(body)}"` }).end()
  })
  const logger = memoryLogger()
  const result = await uploadParts({
    files: manifest.files,
    requests: PresignedRequestList.of(onePutPerFile(manifest.files, store.url)),
    dispatcher: agent,
    concurrency: 8,
    retry: retryPolicy({ sleep: async () => {} }),
    timeouts: timeoutsFor(5000),
    logger,
  })
  assert.equal(result.retries, 4)
  assert.equal(store.attempts(), 44)
  assert.ok(
    logger.lines.includes('The store signals overload (503): 4 uploads at a time'),
    logger.lines.join('\n'),
  )
})

test('a PUT that stalls on every attempt fails naming the file, after the retries', async () => {
  const { manifest } = await oneFileSite('hello')
  const store = await fakeStore(() => {}) // never answers
  const error = await uploadOneFile(manifest.files, store.url, {
    retry: retryPolicy({ retries: 1, sleep: async () => {} }),
    timeouts: timeoutsFor(100),
  }).catch((e: unknown) => e)
  assert.ok(error instanceof PartUploadError)
  assert.equal(error.message, 'Upload of a.txt: no progress for 0.1 s (gave up after 2 attempts)')
  assert.equal(store.attempts(), 2)
})

const fileOf = (req: http.IncomingMessage) => new URL(req.url!, 'http://store').searchParams.get('p')

/** uploadParts of `files` to the store, one PUT per file, 4 at a time, retries without waiting. */
function uploadToStore(files: ArtifactFile[], storeUrl: string, overrides: Partial<UploadOptions> = {}) {
  return uploadParts({
    files,
    requests: PresignedRequestList.of(onePutPerFile(files, storeUrl)),
    dispatcher: agent,
    concurrency: 4,
    retry: retryPolicy({ sleep: async () => {} }),
    timeouts: timeoutsFor(5000),
    logger: memoryLogger(),
    ...overrides,
  })
}

test(
  'a PUT stalled at the end of the upload is sent again at once, without waiting request-timeout',
  { timeout: 10_000 },
  async () => {
    const files = await smallFiles(20)
    let f0 = 0
    const store = await fakeStore((req, body, res) => {
      if (fileOf(req) === 'f0.txt' && ++f0 === 1) return // the first never answers
      res.writeHead(200, { etag: `"${md5(body)}"` }).end()
    })
    const logger = memoryLogger()
    const result = await uploadToStore(files, store.url, {
      // Far longer than the test's own time-out: only the straggler's rule ends the stall.
      timeouts: timeoutsFor(60_000),
      tailStallMs: 100,
      logger,
    })
    assert.equal(store.attempts(), 21)
    assert.equal(result.retries, 1)
    const again = logger.lines.filter((l) => l.includes('sent again'))
    assert.equal(again.length, 1, logger.lines.join('\n'))
    assert.match(
      again[0]!,
      /^Upload of f0\.txt: no progress for \d+\.\d s, while every other part has started: sent again$/,
    )
  },
)

test('a straggler is sent again once: stalled again, it waits request-timeout as any PUT', async () => {
  const files = await smallFiles(5)
  let f0 = 0
  const store = await fakeStore((req, body, res) => {
    if (fileOf(req) === 'f0.txt' && ++f0 <= 2) return // the first two never answer
    res.writeHead(200, { etag: `"${md5(body)}"` }).end()
  })
  const logger = memoryLogger()
  const result = await uploadToStore(files, store.url, {
    retry: retryPolicy({ random: () => 0.5, sleep: async () => {} }),
    timeouts: timeoutsFor(600),
    tailStallMs: 100,
    logger,
  })
  assert.equal(f0, 3)
  assert.equal(result.retries, 2)
  assert.deepEqual(
    logger.lines.filter((l) => l.startsWith('Upload of f0.txt')).map((l) => l.replace(/\d+\.\d s,/, 'N s,')),
    [
      'Upload of f0.txt: no progress for N s, while every other part has started: sent again',
      'Upload of f0.txt: no progress for 0.6 s; retry 1 of 8 in 0.4 s',
    ],
  )
})

test("a part refused while others are stored waits a first retry's wait each time; refused alone, its waits double", async () => {
  // f0.txt the largest: the first to start (the largest go first), with the others still to store.
  const files = await smallFiles(60, { 'f0.txt': 'the largest file of all' })
  for (const concurrency of [2, 1]) {
    let f0 = 0
    const store = await fakeStore((req, body, res) => {
      // f0.txt is refused 4 times, each after 40 ms; every other file is stored after 15 ms, one
      // after another, for far longer than f0.txt's refusals take.
      if (fileOf(req) === 'f0.txt' && ++f0 <= 4) {
        setTimeout(() => res.writeHead(503).end('<Error><Code>SlowDown</Code></Error>'), 40)
        return
      }
      setTimeout(() => res.writeHead(200, { etag: `"${md5(body)}"` }).end(), 15)
    })
    const waits: number[] = []
    await uploadToStore(files, store.url, {
      concurrency,
      retry: retryPolicy({ random: () => 0.5, sleep: async (ms) => void waits.push(ms) }),
    })
    assert.equal(f0, 5)
    assert.deepEqual(
      waits,
      concurrency === 2 ? [375, 375, 375, 375] : [375, 750, 1500, 3000],
      `concurrency ${concurrency}`,
    )
  }
})

test('a PUT at the end that is slow as this store is slow is no straggler: not sent again', async () => {
  // f0.txt the smallest: the last to start (the largest go first).
  const files = await smallFiles(12, { 'f0.txt': 'x' })
  let last = 0
  const store = await fakeStore((req, body, res) => {
    // Every answer takes 150 ms; f0.txt's, the last to start, 400 ms: within 4 times the slowest.
    const slow = fileOf(req) === 'f0.txt'
    if (slow) last++
    setTimeout(() => res.writeHead(200, { etag: `"${md5(body)}"` }).end(), slow ? 400 : 150)
  })
  const logger = memoryLogger()
  const result = await uploadToStore(files, store.url, { tailStallMs: 100, logger })
  assert.equal(last, 1, logger.lines.join('\n'))
  assert.equal(result.retries, 0)
  assert.equal(store.attempts(), 12)
})
