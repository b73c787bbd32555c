// The uploader's parts on their own: the scheduler, the watchdog, and a part sent from bytes.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { createAgent } from '../../src/api/http.ts'
import { PresignedRequestList } from '../../src/api/presigned.ts'
import { retryPolicy } from '../../src/common/retry.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { timeoutsFor } from '../../src/common/timeouts.ts'
import { uploadParts, type BytesFile } from '../../src/deploy/upload.ts'
import { UploadRun } from '../../src/deploy/upload/run.ts'
import { Scheduler } from '../../src/deploy/upload/scheduler.ts'
import { StalledError, TailStallError, Watchdog, type InFlight } from '../../src/deploy/upload/watchdog.ts'
import { fakeStore, md5 } from '../support/fake-store.ts'

const agent = createAgent()
after(() => agent.close())

/** Tasks the test ends by hand, and the items the scheduler has taken so far. */
function heldTasks() {
  const taken: number[] = []
  const ends = new Map<number, { resolve: () => void; reject: (error: Error) => void }>()
  const task = (item: number) =>
    new Promise<void>((resolve, reject) => {
      taken.push(item)
      ends.set(item, { resolve, reject })
    })
  return { taken, ends, task }
}

/** Items 0..count-1, counting how many the scheduler has pulled. */
function* items(count: number, pulled: { count: number }) {
  for (let i = 0; i < count; i++) {
    pulled.count++
    yield i
  }
}

const settle = () => delay(5)

test('the scheduler takes an item only when a place is free, in the order given, and follows its concurrency', async () => {
  const scheduler = new Scheduler<number>(2)
  const { taken, ends, task } = heldTasks()
  const pulled = { count: 0 }
  const done = scheduler.run(items(20_000, pulled), task)
  await settle()
  assert.deepEqual(taken, [0, 1])
  assert.equal(pulled.count, 2, 'no item is taken ahead of a free place')
  scheduler.concurrency = 4
  await settle()
  assert.deepEqual(taken, [0, 1, 2, 3], 'a higher limit is fed at once')
  scheduler.concurrency = 1
  ends.get(0)!.resolve()
  ends.get(1)!.resolve()
  ends.get(2)!.resolve()
  await settle()
  assert.deepEqual(taken, [0, 1, 2, 3], 'a lower limit starts nothing while as many run')
  ends.get(3)!.resolve()
  await settle()
  assert.deepEqual(taken, [0, 1, 2, 3, 4])
  assert.equal(scheduler.running, 1)
  assert.equal(pulled.count, 5)
  scheduler.concurrency = 20_000
  await settle()
  for (const end of ends.values()) end.resolve()
  await done
  assert.equal(taken.length, 20_000)
})

test('the first task to fail rejects the run; no item is taken after it, and whenIdle waits for the others', async () => {
  const scheduler = new Scheduler<number>(3)
  const { taken, ends, task } = heldTasks()
  const pulled = { count: 0 }
  const done = scheduler.run(items(100, pulled), task)
  await settle()
  ends.get(1)!.reject(new Error('part 1 failed'))
  await assert.rejects(done, { message: 'part 1 failed' })
  await settle()
  assert.deepEqual(taken, [0, 1, 2])
  assert.equal(scheduler.running, 2)
  let idle = false
  const idled = scheduler.whenIdle().then(() => (idle = true))
  ends.get(0)!.resolve()
  ends.get(2)!.reject(new Error('part 2 failed too'))
  await idled
  assert.equal(idle, true)
  assert.equal(pulled.count, 3)
})

test("the upload's scheduler runs at the adaptive limit: it starts at SLOW_START, and a cut lowers it", () => {
  const files: BytesFile[] = [{ path: 'a.txt', size: 1, bytes: Buffer.from('a') }]
  const requests = PresignedRequestList.of([
    { path: 'a.txt', url: 'http://127.0.0.1:9/a', byte_offset: 0, content_length: 1 },
  ])
  const run = new UploadRun({
    files,
    requests,
    dispatcher: agent,
    concurrency: 200,
    retry: retryPolicy(),
    timeouts: timeoutsFor(1000),
    logger: memoryLogger(),
  })
  run.progress.stop()
  assert.equal(run.scheduler.concurrency, run.adaptive.current)
  assert.ok(run.adaptive.current < 200)
  const before = run.adaptive.current
  assert.equal(run.adaptive.overloaded(run.adaptive.started()), true)
  assert.equal(run.scheduler.concurrency, Math.floor(before / 2))
})

/** A PUT in flight for the watchdog's eyes only: it records why it was aborted. */
function put(overrides: Partial<InFlight> = {}): InFlight & { reasons: Error[] } {
  const reasons: Error[] = []
  return {
    lastProgress: 0,
    restartable: true,
    deadline: Infinity,
    limit: Infinity,
    answered: false,
    slot: -1,
    reasons,
    abort: (reason) => void reasons.push(reason),
    ...overrides,
  }
}

test('the watchdog aborts a PUT with no progress for stallMs, not before, and one past its deadline', () => {
  const watchdog = new Watchdog(timeoutsFor(100), 1000)
  const quiet = put()
  const trickling = put({ deadline: 150, limit: 150 })
  watchdog.puts.add(quiet)
  watchdog.puts.add(trickling)
  watchdog.sweep(99)
  assert.deepEqual([quiet.reasons, trickling.reasons], [[], []])
  watchdog.puts.progressed(trickling, 99)
  watchdog.sweep(100)
  assert.equal(quiet.reasons.length, 1)
  assert.ok(quiet.reasons[0] instanceof StalledError)
  assert.equal(quiet.reasons[0].message, 'no progress for 0.1 s')
  assert.equal(trickling.reasons.length, 0)
  watchdog.puts.progressed(trickling, 149)
  watchdog.sweep(150)
  assert.ok(trickling.reasons[0] instanceof StalledError)
  assert.equal(trickling.reasons[0].message, 'not answered within its deadline of 0.2 s')
})

test('the tail rule: once every part has started, a quiet restartable PUT is aborted to be sent again; not before, and not twice', () => {
  const watchdog = new Watchdog(timeoutsFor(10_000), 100)
  const straggler = put()
  const sentAgain = put({ restartable: false })
  const answered = put({ answered: true })
  for (const p of [straggler, sentAgain, answered]) watchdog.puts.add(p)
  watchdog.sweep(500)
  assert.equal(straggler.reasons.length, 0, 'parts are still to start: no straggler yet')
  watchdog.everyPartStarted()
  watchdog.sweep(99)
  assert.equal(straggler.reasons.length, 0)
  watchdog.sweep(100)
  assert.ok(straggler.reasons[0] instanceof TailStallError)
  assert.equal(straggler.reasons[0].message, 'no progress for 0.1 s')
  assert.deepEqual([sentAgain.reasons, answered.reasons], [[], []])
})

test('the tail rule waits 4 times the longest quiet any PUT had before its progress came', () => {
  const watchdog = new Watchdog(timeoutsFor(10_000), 100)
  const slow = put()
  watchdog.puts.add(slow)
  watchdog.puts.progressed(slow, 150)
  watchdog.everyPartStarted()
  watchdog.sweep(150 + 599)
  assert.equal(slow.reasons.length, 0)
  watchdog.sweep(150 + 600)
  assert.ok(slow.reasons[0] instanceof TailStallError)
})

test('the running watchdog aborts a stalled PUT about stallMs after its last progress', async () => {
  const watchdog = new Watchdog(timeoutsFor(80), 1000)
  let abortedAt: number | undefined
  const started = performance.now()
  watchdog.puts.add(put({ lastProgress: started, abort: () => void (abortedAt ??= performance.now()) }))
  watchdog.start()
  try {
    for (let i = 0; i < 100 && abortedAt === undefined; i++) await delay(10)
  } finally {
    watchdog.stop()
  }
  assert.ok(abortedAt !== undefined, 'aborted')
  const after = abortedAt - started
  assert.ok(after >= 80 && after < 80 + 20 + 200, `aborted ${after} ms after its last progress`)
})

test('a part from bytes is sent from memory, whole or in parts, hashed, with no file opened', async () => {
  const page = Buffer.from('<!doctype html>\n<h1>Preview closed</h1>\n')
  const big = Buffer.alloc(3000, 7)
  const files: BytesFile[] = [
    { path: 'index.html', size: page.length, contentType: 'text/html; charset=utf-8', bytes: page },
    { path: 'big.bin', size: big.length, bytes: big },
  ]
  const received = new Map<string, { body: Buffer; type: string | undefined }>()
  const store = await fakeStore((req, body, res) => {
    received.set(req.url!, { body, type: req.headers['content-type'] })
    res.writeHead(200, { etag: `"${md5(body)}"` }).end()
  })
  const result = await uploadParts({
    files,
    requests: PresignedRequestList.of([
      { path: 'index.html', url: `${store.url}/page`, byte_offset: 0, content_length: page.length },
      { path: 'big.bin', url: `${store.url}/b1`, byte_offset: 0, content_length: 1000 },
      { path: 'big.bin', url: `${store.url}/b2`, byte_offset: 1000, content_length: 2000 },
    ]),
    dispatcher: agent,
    concurrency: 2,
    retry: retryPolicy({ sleep: async () => {} }),
    timeouts: timeoutsFor(5000),
    logger: memoryLogger(),
    open: () => Promise.reject(new Error('no file is opened')),
  })
  assert.deepEqual(received.get('/page'), { body: page, type: 'text/html; charset=utf-8' })
  assert.deepEqual(received.get('/b1')?.body, big.subarray(0, 1000))
  assert.deepEqual(received.get('/b2')?.body, big.subarray(1000))
  const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex')
  assert.deepEqual(result.sha256, [sha256(page), sha256(big)])
})
