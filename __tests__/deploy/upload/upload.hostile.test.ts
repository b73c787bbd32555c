// The upload in a hostile world: a store whose answer trickles, a PUT whose progress never ends,
// requests that add up but overlap, a file replaced by a link (or another file) between the scan and
// the upload, a full descriptor table, and a failed upload that must stop before its dispatcher closes.
import assert from 'node:assert/strict'
import { rename, stat, symlink, unlink, utimes, writeFile } from 'node:fs/promises'
import type http from 'node:http'
import path from 'node:path'
import { after, test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { Agent, type Dispatcher } from 'undici'
import { createAgent } from '../../../src/api/http.ts'
import { retryPolicy } from '../../../src/common/retry.ts'
import type { PresignedRequest } from '../../../src/api/types.ts'
import { memoryLogger } from '../../../src/common/logger.ts'
import { timeoutsFor } from '../../../src/common/timeouts.ts'
import { openFile, type OpenFile } from '../../../src/deploy/collect/read.ts'
import { type ArtifactFile } from '../../../src/deploy/collect/files.ts'
import { planParts } from '../../../src/deploy/upload/parts.ts'
import { PartUploadError } from '../../../src/deploy/upload/put.ts'
import { uploadFiles, type UploadOptions } from '../../../src/deploy/upload/upload.ts'
import { fakeStore, md5, onePutPerFile } from '../../support/fake-store.ts'
import { scanArtifacts, tempDir, writeTree } from '../../support/helpers.ts'
import { needsSymlinks } from '../../support/platform.ts'

const agent = createAgent()
after(() => agent.close())

/**
 * Writes `first`, then one byte every `everyMs` until `forMs` have passed, then `last`, unless the
 * client goes first. Resolves with whether the answer was cut short by the client.
 */
function trickle(
  res: http.ServerResponse,
  first: string,
  last: string,
  everyMs: number,
  forMs: number,
): Promise<boolean> {
  return new Promise((resolve) => {
    res.write(first)
    // Counted in ticks, not read off the clock: on a busy machine the ticks come late, and so does the end.
    let ticks = 0
    const timer = setInterval(() => {
      if (++ticks * everyMs >= forMs) {
        clearInterval(timer)
        res.end(last)
        resolve(false)
      } else res.write(' ')
    }, everyMs)
    res.on('close', () => {
      clearInterval(timer)
      resolve(!res.writableFinished)
    })
  })
}

/** A time of whole seconds, which every file system keeps exactly. */
const WHEN = new Date(1_700_000_000_000)

/** Writes the files, each of time WHEN, and scans them. */
async function scan(files: Record<string, string | Buffer | number>) {
  const root = await tempDir()
  const written = await writeTree(root, files)
  for (const name of written.keys()) await utimes(path.join(root, name), WHEN, WHEN)
  const scanned = await scanArtifacts({
    root,
    patterns: ['**'],
    includeHidden: false,
    logger: memoryLogger(),
  })
  return { root, written, scanned }
}

function upload(files: ArtifactFile[], requests: PresignedRequest[], overrides: Partial<UploadOptions> = {}) {
  return uploadFiles({
    files,
    requests: requests,
    dispatcher: agent,
    concurrency: 1,
    retry: retryPolicy({ retries: 0, sleep: async () => {} }),
    timeouts: timeoutsFor(1000),
    logger: memoryLogger(),
    ...overrides,
  })
}

test('a 2xx answer is taken with its headers: a body trickled after them holds nothing up, and is cut off', async () => {
  const { scanned } = await scan({ 'a.txt': 'hello' })
  const cut: Promise<boolean>[] = []
  // 200 with the right ETag, then a byte every 50 ms for 3 s: each byte would be progress.
  const store = await fakeStore((_req, body, res) => {
    res.writeHead(200, { etag: `"${md5(body)}"`, 'content-type': 'application/xml' })
    cut.push(trickle(res, '<', '>', 50, 3000))
  })
  const result = await upload(scanned, onePutPerFile(scanned, store.url))
  assert.equal(result.retries, 0)
  assert.equal(store.attempts(), 1)
  assert.equal(await cut[0], true, 'the trickling answer is cut off when the upload ends')
})

test('an error answer whose body trickles is taken request-timeout after its headers, as far as it came', async () => {
  const { scanned } = await scan({ 'a.txt': 'hello' })
  const cut: Promise<boolean>[] = []
  const store = await fakeStore((_req, _body, res) => {
    res.writeHead(403, { 'content-type': 'application/xml' })
    cut.push(trickle(res, '<Error><Code>AccessDenied</Code>', '</Error>', 50, 3000))
  })
  const error = await upload(scanned, onePutPerFile(scanned, store.url), {
    timeouts: timeoutsFor(300),
  }).catch((e: unknown) => e)
  assert.ok(error instanceof PartUploadError, String(error))
  assert.equal(error.message, 'Upload of a.txt: the store answered 403 AccessDenied')
  assert.equal(error.retryable, false)
  assert.equal(await cut[0], true, 'the upload did not wait for the whole trickle')
})

test("a PUT that is never answered, whatever undici's timers allow, is aborted at its deadline, and retried", async () => {
  const { scanned } = await scan({ 'a.txt': 'hello' })
  // The deadline is the upload's own clock: here each attempt's ends once the store has the whole
  // body (an event, not a time), and the store never answers.
  const asked: number[] = []
  const expire: Array<() => void> = []
  const store = await fakeStore(() => expire.at(-1)!())
  const logger = memoryLogger()
  const error = await upload(scanned, onePutPerFile(scanned, store.url), {
    timeouts: timeoutsFor(60_000),
    deadline: (ms, expired) => {
      asked.push(ms)
      expire.push(expired)
      return () => {}
    },
    retry: retryPolicy({ retries: 1, sleep: async () => {} }),
    logger,
  }).catch((e: unknown) => e)
  assert.ok(error instanceof PartUploadError, String(error))
  assert.equal(
    error.message,
    'Upload of a.txt: not answered within its deadline of 241 s (gave up after 2 attempts)',
  )
  const deadline = timeoutsFor(60_000).putDeadlineMs(5)
  assert.deepEqual(asked, [deadline, deadline], 'retried once, each attempt with putDeadlineMs(5)')
  assert.equal(store.attempts(), 2)
  assert.ok(logger.lines.some((l) => l.startsWith('Upload of a.txt: not answered within its deadline')))
})

test('the deadline of a PUT: 4 request timeouts, and one more per 256 KiB, up to a whole second', () => {
  assert.equal(timeoutsFor(30_000).putDeadlineMs(0), 120_000)
  assert.equal(timeoutsFor(30_000).putDeadlineMs(1), 121_000)
  assert.equal(timeoutsFor(250).putDeadlineMs(0), 1_000)
  assert.equal(timeoutsFor(30_000).putDeadlineMs(1024 * 1024), 240_000)
  assert.equal(timeoutsFor(30_000).putDeadlineMs(100 * 1024 * 1024), 30_000 * 404)
})

test('requests that add up to a file but overlap, or leave a gap, are refused naming the file and the ranges', async () => {
  const { scanned } = await scan({ 'a.bin': 10, 'b.txt': 'hello' })
  const request = (p: string, byte_offset: number, content_length: number): PresignedRequest => ({
    path: p,
    url: `u-${p}-${byte_offset}`,
    byte_offset,
    content_length,
  })
  const b = request('b.txt', 0, 5)
  const plan = (requests: PresignedRequest[]) => () => planParts(scanned, requests)
  // 6 + 4 = 10 bytes, but bytes 4 and 5 twice and 8 and 9 never.
  assert.throws(plan([request('a.bin', 0, 6), request('a.bin', 4, 4), b]), {
    message: "The service's upload requests for 'a.bin' overlap: bytes 0+6 and 4+4",
  })
  // The same part twice.
  assert.throws(plan([request('a.bin', 0, 5), request('a.bin', 0, 5), b]), {
    message: "The service's upload requests for 'a.bin' overlap: bytes 0+5 and 0+5",
  })
  // 2 + 4 + 4 = 10, in any order of the requests: bytes 2 and 3 never, 6 to 7 twice.
  assert.throws(plan([request('a.bin', 6, 4), b, request('a.bin', 4, 4), request('a.bin', 0, 2)]), {
    message:
      "The service's upload requests for 'a.bin' leave a gap: bytes 2+2 (between bytes 0+2 and bytes 4+4)",
  })
  // Contiguous parts in any order are fine.
  const fine = planParts(scanned, [request('a.bin', 7, 3), b, request('a.bin', 0, 3), request('a.bin', 3, 4)])
  assert.deepEqual(
    fine.parts.map((p) => [p.file.path, p.number, p.of]),
    // Numbered by their place in the file.
    [
      ['a.bin', 3, 3],
      ['b.txt', 1, 1],
      ['a.bin', 1, 3],
      ['a.bin', 2, 3],
    ],
  )
  // Nothing is sent for a plan that does not hold.
  const store = await fakeStore((_req, body, res) => res.writeHead(200, { etag: `"${md5(body)}"` }).end())
  await assert.rejects(
    upload(scanned, [
      { ...request('a.bin', 0, 6), url: `${store.url}/1` },
      { ...request('a.bin', 4, 4), url: `${store.url}/2` },
      { ...b, url: `${store.url}/3` },
    ]),
    /overlap: bytes 0\+6 and 4\+4/,
  )
  assert.equal(store.attempts(), 0)
})

test(
  'a scanned file replaced by a link to a file outside path fails naming it; the outside file is never opened',
  { skip: needsSymlinks },
  async () => {
    const { root, scanned } = await scan({ 'a.txt': 'hello', 'big.bin': 2 * 1024 * 1024 + 3 })
    const outside = await tempDir()
    const secrets = await writeTree(outside, { 'secret.txt': 'SECRET', 'secret.bin': 2 * 1024 * 1024 + 3 })
    // The same size and time as the files they replace: nothing but their identity tells them apart.
    for (const [name, secret] of [
      ['a.txt', 'secret.txt'],
      ['big.bin', 'secret.bin'],
    ] as const) {
      const file = scanned.find((f) => f.path === name)!
      await writeFile(path.join(outside, secret), secrets.get(secret)!.subarray(0, file.size))
      await utimes(path.join(outside, secret), WHEN, WHEN)
      await unlink(path.join(root, name))
      await symlink(path.join(outside, secret), path.join(root, name))
    }
    const opened: string[] = []
    const open: OpenFile = (p, flags) => {
      opened.push(p)
      return openFile(p, flags)
    }
    const store = await fakeStore((_req, body, res) => res.writeHead(200, { etag: `"${md5(body)}"` }).end())
    for (const name of ['a.txt', 'big.bin']) {
      const file = scanned.filter((f) => f.path === name)
      const error = await upload(file, onePutPerFile(file, store.url), { open }).catch((e: unknown) => e)
      assert.ok(error instanceof Error)
      assert.match(
        error.message,
        new RegExp(
          `^${name.replace('.', '\\.')} can no longer be opened \\(ELOOP: it became a link after it was scanned; the link is not followed\\)$`,
        ),
      )
    }
    assert.deepEqual(opened, [path.join(root, 'a.txt'), path.join(root, 'big.bin')])
    assert.equal(store.attempts(), 0, 'nothing was sent')
  },
)

test('a scanned file replaced by another file of the same size and time fails naming it, before a byte is sent', async () => {
  const { root, scanned } = await scan({ 'a.txt': 'hello' })
  const file = scanned[0]!
  const other = path.join(root, 'other.tmp')
  await writeFile(other, 'HELLO')
  await utimes(other, WHEN, WHEN)
  await rename(other, path.join(root, 'a.txt'))
  assert.equal((await stat(path.join(root, 'a.txt'))).mtimeMs, file.mtimeMs)
  const store = await fakeStore((_req, body, res) => res.writeHead(200, { etag: `"${md5(body)}"` }).end())
  await assert.rejects(upload(scanned, onePutPerFile(scanned, store.url)), {
    message: 'a.txt was replaced after it was scanned: another file is at its path now',
  })
  assert.equal(store.attempts(), 0)
})

/** An open that fails with `code` for the paths `fails` says, as a full descriptor table would. */
function failingOpen(code: 'EMFILE' | 'ENFILE', fails: (p: string) => boolean): OpenFile {
  return (p, flags) => {
    if (!fails(p)) return openFile(p, flags)
    const error = Object.assign(new Error(`${code}: too many open files, open '${p}'`), {
      code,
      errno: code === 'EMFILE' ? -24 : -23,
      syscall: 'open',
      path: p,
    })
    throw error
  }
}

test('out of file descriptors while the files are read: each open is waited out and retried, saying so, every file uploaded', async () => {
  const names = Array.from({ length: 40 }, (_, i) => `f${i}.txt`)
  const { scanned, written } = await scan(Object.fromEntries(names.map((n) => [n, `file ${n}`])))
  const received = new Map<string, Buffer>()
  const store = await fakeStore((req, body, res) => {
    received.set(new URL(req.url!, 'http://x').searchParams.get('p')!, body)
    res.writeHead(200, { etag: `"${md5(body)}"` }).end()
  })
  // The first 8 opens find the table full, as when the PUTs' sockets and files reach the limit.
  let opens = 0
  const logger = memoryLogger()
  const result = await upload(scanned, onePutPerFile(scanned, store.url), {
    concurrency: 8,
    logger,
    retry: retryPolicy({ sleep: async () => {} }),
    open: failingOpen('EMFILE', () => ++opens <= 8),
  })
  assert.equal(result.retries, 8)
  assert.equal(received.size, 40)
  for (const [name, bytes] of written) assert.deepEqual(received.get(name), bytes, name)
  const lines = logger.lines.filter((l) => /descriptor|EMFILE|retry|closed/i.test(l))
  assert.equal(lines.length, 8, lines.join('\n'))
  for (const line of lines)
    assert.match(
      line,
      /^Upload of f\d+\.txt: out of file descriptors \(EMFILE\): raise the limit \(ulimit -n\); retry 1 of 8 in /,
    )
})

test('out of file descriptors as a streamed part (over 1 MiB) opens its file: waited out and retried too', async () => {
  const big = Buffer.alloc(3 * 1024 * 1024, 7)
  const { scanned } = await scan({ 'big.bin': big })
  const received: Buffer[] = []
  const store = await fakeStore((_req, body, res) => {
    received.push(body)
    res.writeHead(200, { etag: `"${md5(body)}"` }).end()
  })
  let opens = 0
  const logger = memoryLogger()
  const result = await upload(scanned, onePutPerFile(scanned, store.url), {
    concurrency: 1,
    logger,
    retry: retryPolicy({ sleep: async () => {} }),
    open: failingOpen('EMFILE', () => ++opens <= 2),
  })
  assert.equal(result.retries, 2)
  assert.deepEqual(received, [big])
  assert.match(
    logger.lines.join('\n'),
    /Upload of big\.bin: out of file descriptors \(EMFILE\): raise the limit/,
  )
})

test('out of file descriptors for good: the upload fails saying so, after the retries, without a "client is closed"', async () => {
  const { scanned } = await scan(
    Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i}.txt`, `f${i}`])),
  )
  const store = await fakeStore((_req, body, res) => res.writeHead(200, { etag: `"${md5(body)}"` }).end())
  const logger = memoryLogger()
  const error = await upload(scanned, onePutPerFile(scanned, store.url), {
    concurrency: 4,
    logger,
    retry: retryPolicy({ retries: 3, sleep: async () => {} }),
    open: failingOpen('ENFILE', (p) => p.endsWith(`${path.sep}f3.txt`)),
  }).catch((e: unknown) => e)
  assert.ok(error instanceof PartUploadError, String(error))
  assert.equal(
    error.message,
    'Upload of f3.txt: out of file descriptors (ENFILE): raise the limit (ulimit -n) (gave up after 4 attempts)',
  )
  assert.ok(!logger.lines.some((l) => /closed/i.test(l)), logger.lines.join('\n'))
  assert.equal(
    logger.lines.filter((l) => l.startsWith('Upload of f3.txt: out of file descriptors')).length,
    3,
  )
})

test('once a part fails for good, no other part is retried or sent, none is left in flight: the dispatcher closes at once, with no "client is closed"', async () => {
  const { scanned } = await scan(
    Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`f${i}.txt`, `f${i}`])),
  )
  // f0 is refused for good after 100 ms; f9 is never answered; the others are answered 500 at once,
  // again and again.
  const store = await fakeStore((req, _body, res) => {
    if (req.url!.endsWith('p=f0.txt')) {
      setTimeout(() => res.writeHead(403).end('<Error><Code>AccessDenied</Code></Error>'), 100)
    } else if (!req.url!.endsWith('p=f9.txt')) {
      res.writeHead(500).end('<Error><Code>InternalError</Code></Error>')
    }
  })
  // Counts the PUTs this client starts: one started before the failure may reach the store after it.
  const dispatcher = new (class extends Agent {
    started = 0
    override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      this.started++
      return super.dispatch(options, handler)
    }
  })()
  after(() => dispatcher.destroy())
  const logger = memoryLogger()
  const error = await upload(scanned, onePutPerFile(scanned, store.url), {
    dispatcher,
    concurrency: 10,
    logger,
    timeouts: timeoutsFor(5000),
    // Retries wait 30 ms: some are waiting when f0 fails.
    retry: retryPolicy({ retries: 20, maxElapsedMs: 60_000, sleep: () => delay(30) }),
  }).catch((e: unknown) => e)
  assert.ok(error instanceof PartUploadError, String(error))
  assert.equal(error.message, 'Upload of f0.txt: the store answered 403 AccessDenied')
  // What the pipeline does next: close the dispatcher, which waits for the requests in flight.
  const lines = logger.lines.length
  const started = dispatcher.started
  const closed = dispatcher.close().then(() => 'closed')
  await delay(200)
  assert.equal(logger.lines.length, lines, logger.lines.slice(lines).join('\n'))
  assert.equal(dispatcher.started, started, 'no PUT started after the failure')
  assert.ok(!logger.lines.some((l) => /client is closed|UND_ERR_CLOSED/.test(l)), logger.lines.join('\n'))
  assert.equal(
    await Promise.race([closed, delay(1000).then(() => 'still open')]),
    'closed',
    'no PUT was left in flight',
  )
})
