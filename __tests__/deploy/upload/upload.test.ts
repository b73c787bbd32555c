import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { after, test } from 'node:test'
import { createAgent } from '../../../src/api/http.ts'
import { retryPolicy } from '../../../src/common/retry.ts'
import type { PresignedRequest } from '../../../src/api/types.ts'
import { type ArtifactFile } from '../../../src/deploy/collect/files.ts'
import { memoryLogger } from '../../../src/common/logger.ts'
import { timeoutsFor } from '../../../src/common/timeouts.ts'
import { planParts } from '../../../src/deploy/upload/parts.ts'
import { PartUploadError } from '../../../src/deploy/upload/put.ts'
import { uploadFiles, type UploadOptions } from '../../../src/deploy/upload/upload.ts'
import { fakeStore, md5, onePutPerFile } from '../../support/fake-store.ts'
import { collectArtifacts, scanArtifacts, tempDir, writeTree } from '../../support/helpers.ts'

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

/** uploadFiles of oneFileSite's one file to `url`: one PUT at a time, retries without waiting. */
function uploadOneFile(files: ArtifactFile[], url: string, overrides: Partial<UploadOptions> = {}) {
  return uploadFiles({
    files,
    requests: requestFor(url, 5),
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
    /^Error: a\.txt changed after it was scanned/,
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
    uploadFiles({
      files: manifest.files,
      requests: requests(url),
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
  assert.equal(error.message.split(' changed after')[0], touched)
  assert.equal(store.attempts(), 1, 'the changed file is not sent')
  const fresh = await collectSite(root)
  manifest.files.splice(0, manifest.files.length, ...fresh.files)
  // The empty file has no request: it is read as the upload starts, as a file is when it is sent.
  await utimes(path.join(root, 'empty.txt'), new Date(), new Date(Date.now() + 9000))
  store = await fakeStore((_req, body, res) => res.writeHead(200, { etag: `"${md5(body)}"` }).end())
  await assert.rejects(upload(store.url), /^Error: empty\.txt changed after it was scanned/)
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
    () => planParts(manifest.files, [{ path: 'other', url: 'u', byte_offset: 0, content_length: 1 }]),
    /not a file of this site/,
  )
  assert.throws(
    () => planParts(manifest.files, [{ path: 'a.txt', url: 'u', byte_offset: 3, content_length: 5 }]),
    /which has 5/,
  )
  assert.throws(
    () => planParts(manifest.files, [{ path: 'a.txt', url: 'u', byte_offset: 0, content_length: 4 }]),
    /cover 4 of its 5 bytes/,
  )
  const plan = planParts(manifest.files, [
    { path: 'a.txt', url: 'u1', byte_offset: 0, content_length: 3 },
    { path: 'a.txt', url: 'u2', byte_offset: 3, content_length: 2 },
  ])
  assert.equal(plan.parts.length, 2)
  assert.equal(plan.byFile[0]!.length, 2)
  assert.deepEqual(
    plan.parts.map((p) => [p.request.url, p.file.path, p.fileIndex, p.number, p.of]),
    [
      ['u1', 'a.txt', 0, 1, 2],
      ['u2', 'a.txt', 0, 2, 2],
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
  const result = await uploadFiles({
    files: scanned,
    requests: [
      { path: 'a.txt', url: url('a'), byte_offset: 0, content_length: 5 },
      { path: 'big.bin', url: url('b1'), byte_offset: 0, content_length: 1024 },
      { path: 'big.bin', url: url('b2'), byte_offset: 1024, content_length: 1024 },
      { path: 'big.bin', url: url('b3'), byte_offset: 2048, content_length: 952 },
    ],
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
  const error = await uploadFiles({
    files,
    requests: [
      { path: 'big.bin', url: url('b1'), byte_offset: 0, content_length: 1024 },
      { path: 'big.bin', url: url('b2'), byte_offset: 1024, content_length: 1024 },
      { path: 'big.bin', url: url('b3'), byte_offset: 2048, content_length: 952 },
    ],
    dispatcher: agent,
    concurrency: 1,
    retry: retryPolicy({ sleep: async () => {} }),
    timeouts: timeoutsFor(5000),
    logger: memoryLogger(),
  }).catch((e: unknown) => e)
  assert.ok(error instanceof Error)
  assert.match(
    error.message,
    /^big\.bin changed after it was scanned: part 1\/3 as sent is not what the file holds now/,
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
    /^Error: a\.txt changed after it was scanned: the bytes sent are not the ones hashed before the upload/,
  )
})

test('small files read one after another each send exactly their own bytes', async () => {
  const root = await tempDir()
  // One at a time, a 40,000-byte file after a 100-byte one: no PUT sends another's bytes.
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
  const result = await uploadFiles({
    files: scanned,
    requests: scanned.map((f) => ({
      path: f.path,
      url: url(f.path, f.path === 'tiny.txt' ? 60 : 3600),
      byte_offset: 0,
      content_length: f.size,
    })),
    dispatcher: agent,
    concurrency: 1,
    retry: retryPolicy({ sleep: async () => {} }),
    timeouts: timeoutsFor(5000),
    logger: memoryLogger(),
  })
  assert.deepEqual(
    order,
    scanned.map((f) => f.path),
    'in the order the service gave',
  )
  for (const [name, bytes] of written) assert.ok(received.get(name)?.equals(bytes), name)
  const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex')
  scanned.forEach((file, i) => assert.equal(result.sha256?.[i], sha256(written.get(file.path)!), file.path))
})

// Bounded only so that an upload that never reaches the wanted number of PUTs fails instead of hanging.
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
  const result = await uploadFiles({
    files: scanned,
    requests: [{ path: 'big.bin', url: `${store.url}/put?p=big`, byte_offset: 0, content_length: size }],
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
  const error = await uploadFiles({
    files: manifest.files,
    requests: onePutPerFile(manifest.files, store.url),
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

test('503 SlowDown from the store is retried by the retry engine, each retry said', async () => {
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
  const result = await uploadFiles({
    files: manifest.files,
    requests: onePutPerFile(manifest.files, store.url),
    dispatcher: agent,
    concurrency: 8,
    retry: retryPolicy({ sleep: async () => {} }),
    timeouts: timeoutsFor(5000),
    logger,
  })
  assert.equal(result.retries, 4)
  assert.equal(store.attempts(), 44)
  // The first four attempts to arrive, of whichever files: a file's retry may arrive before another's first.
  const retried = logger.lines.filter((l) =>
    /: the store answered 503 SlowDown: Please reduce your request rate\.; retry [1-4] of 8 in /.test(l),
  )
  assert.equal(retried.length, 4, logger.lines.join('\n'))
})

test('a PUT that stalls on every attempt fails naming the file, after the retries', async () => {
  const { manifest } = await oneFileSite('hello')
  const store = await fakeStore(() => {}) // never answers
  const error = await uploadOneFile(manifest.files, store.url, {
    retry: retryPolicy({ retries: 1, sleep: async () => {} }),
    timeouts: timeoutsFor(100),
    // undici's own timer ends the wait: the PUT's deadline in all is not reached.
    deadline: () => () => {},
  }).catch((e: unknown) => e)
  assert.ok(error instanceof PartUploadError)
  assert.equal(
    error.message,
    'Upload of a.txt: no answer within 0.1 s (UND_ERR_HEADERS_TIMEOUT) (gave up after 2 attempts)',
  )
  assert.equal(store.attempts(), 2)
})
