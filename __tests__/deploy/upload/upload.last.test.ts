// The last file (the build's record), made from the others' SHA-256 as sent: it goes as soon as every
// byte of theirs is sent, not after their answers, so a retry must send the bytes sent first.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { utimes, writeFile } from 'node:fs/promises'
import net, { type AddressInfo } from 'node:net'
import path from 'node:path'
import { after, test } from 'node:test'
import { createAgent } from '../../../src/api/http.ts'
import { retryPolicy } from '../../../src/common/retry.ts'
import { memoryLogger } from '../../../src/common/logger.ts'
import { timeoutsFor } from '../../../src/common/timeouts.ts'
import { uploadFiles, type UploadOptions } from '../../../src/deploy/upload/upload.ts'
import { fakeStore, md5, onePutPerFile } from '../../support/fake-store.ts'
import { collectArtifacts, tempDir, writeTree } from '../../support/helpers.ts'

const agent = createAgent()
after(() => agent.close())

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex')

const collect = (root: string) =>
  collectArtifacts({ root, patterns: ['**'], includeHidden: false, logger: memoryLogger() })

async function site(files: Record<string, string | number>) {
  const root = await tempDir()
  const written = await writeTree(root, files)
  return { written, files: (await collect(root)).files }
}

const options = (
  overrides: Partial<UploadOptions> & Pick<UploadOptions, 'files' | 'requests'>,
): UploadOptions => ({
  dispatcher: agent,
  concurrency: 4,
  retry: retryPolicy({ sleep: async () => {} }),
  timeouts: timeoutsFor(5000),
  logger: memoryLogger(),
  ...overrides,
})

test("the last file is made from the others' SHA-256 and sent while their answers are still to come", async () => {
  const { written, files } = await site({ 'a.txt': 'hello', 'b.txt': 'world', 'c.bin': 2 * 1024 * 1024 })
  const record = Buffer.from('{"record":"of the build"}')
  const held: (() => void)[] = []
  let recordArrived = false
  let waitedOut = false
  const store = await fakeStore((req, body, res) => {
    const answer = () => res.writeHead(200, { etag: `"${md5(body)}"` }).end()
    if (req.url !== '/record') return recordArrived ? answer() : void held.push(answer)
    recordArrived = true
    answer()
    held.splice(0).forEach((release) => release())
  })
  // Only so that an upload that waits for the files' answers fails instead of hanging.
  const timer = setTimeout(() => {
    waitedOut = true
    held.splice(0).forEach((release) => release())
  }, 3000)
  after(() => clearTimeout(timer))
  let madeFrom: string[] | undefined
  const result = await uploadFiles(
    options({
      files,
      requests: onePutPerFile(files, store.url),
      last: {
        requests: [
          { path: 'record', url: `${store.url}/record`, byte_offset: 0, content_length: record.length },
        ],
        make: (digests) => {
          madeFrom = [...digests]
          return { path: 'record', size: record.length, bytes: record }
        },
      },
    }),
  )
  assert.equal(waitedOut, false, 'the record reached the store before any file was answered')
  assert.deepEqual(
    madeFrom,
    files.map((f) => sha256(written.get(f.path)!)),
  )
  assert.deepEqual(result.sha256, madeFrom)
  assert.equal(result.parts, 4)
  assert.equal(result.bytes, 5 + 5 + 2 * 1024 * 1024 + record.length)
})

test('a file rewritten (same size and time) between a failed PUT and its retry fails naming it: the retry is not sent', async () => {
  const root = await tempDir()
  const written = await writeTree(root, { 'a.txt': 'hello' })
  const when = new Date('2026-01-02T03:04:05Z')
  await utimes(path.join(root, 'a.txt'), when, when)
  const { files } = await collect(root)
  const store = await fakeStore((_req, _body, res, attempt) => {
    if (attempt > 1) return void res.writeHead(200).end()
    const flipped = Buffer.from(written.get('a.txt')!.map((b) => b ^ 0xff))
    void writeFile(path.join(root, 'a.txt'), flipped)
      .then(() => utimes(path.join(root, 'a.txt'), when, when))
      .then(() => res.writeHead(503).end())
  })
  const error = await uploadFiles(options({ files, requests: onePutPerFile(files, store.url) })).catch(
    (e: unknown) => e,
  )
  assert.ok(error instanceof Error)
  assert.match(
    error.message,
    /^a\.txt changed after it was scanned: the bytes sent again are not the ones sent first/,
  )
  assert.equal(store.attempts(), 1)
})

test('a store that answers 2xx before every byte of a streamed part was sent has not stored it: retried, then failed saying so', async () => {
  const { files } = await site({ 'big.bin': 8 * 1024 * 1024 })
  let attempts = 0
  // Answers each request at once and reads no more of it: its body cannot all be sent.
  const server = net.createServer((socket) => {
    attempts++
    socket.once('data', () => {
      socket.pause()
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  after(() => server.close())
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const retry = retryPolicy({ sleep: async () => {}, retries: 1 })
  const error = await uploadFiles(options({ files, requests: onePutPerFile(files, url), retry })).catch(
    (e: unknown) => e,
  )
  assert.ok(error instanceof Error)
  assert.equal(
    error.message,
    'Upload of big.bin: the store answered 200 before every byte was sent (gave up after 2 attempts)',
  )
  assert.equal(attempts, 2)
})
