import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, test } from 'node:test'
import { Agent } from 'undici'
import { buildManifest, type ManifestFile, type Manifest } from '../../../src/deploy/collect/files.ts'
import { RECORD_MAX_BYTES, RECORD_PATH, recordFile } from '../../../src/deploy/collect/record.ts'
import { NotLiveError, notLive } from '../../../src/deploy/live/publish-and-see.ts'
import { FIRST_WAIT_MS, LONGEST_WAIT_MS } from '../../../src/common/poll.ts'
import {
  compareServed,
  hostFetcher,
  pollUntilLive,
  sampleProbes,
  type FetchProbe,
  type Probe,
  type Served,
  type Verification,
} from '../../../src/deploy/live/verify.ts'
import type { ServingPlan } from '../../../src/deploy/collect/web-engine.ts'
import type { Published } from '../../../src/deploy/live/prepare.ts'
import { memoryLogger } from '../../../src/common/logger.ts'

const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex')

function file(path: string, content: string | number, contentType?: string): ManifestFile {
  const bytes = typeof content === 'number' ? Buffer.alloc(content, 1) : Buffer.from(content)
  return {
    path,
    absolutePath: `/site/${path}`,
    size: bytes.length,
    mtimeMs: 0,
    dev: 0,
    ino: 0,
    sha256: sha(bytes),
    ...(contentType ? { contentType } : {}),
  }
}

function manifest(files: ManifestFile[]): Manifest {
  return {
    files,
    fileCount: files.length,
    totalBytes: files.reduce((n, f) => n + f.size, 0),
    digest: 'sha256:x',
  }
}

const unityServing: ServingPlan = {
  engine: 'auto',
  builds: [
    { engine: 'unity', folder: 'Build', summary: 'Unity WebGL build', evidence: 'Build/game.loader.js' },
  ],
  contentTypes: [],
  routes: [
    {
      glob: 'Build/*.br',
      priority: 100,
      header: { name: 'Content-Encoding', value: 'br' },
      from: 'web-engine',
    },
  ],
  warnings: [],
  notes: [],
}

describe('sampleProbes', () => {
  test('/, the pages, the engine files with their headers, then the largest by size, each once', () => {
    const files = [
      file('index.html', '<title>game</title>', 'text/html; charset=utf-8'),
      file('about.html', 'about', 'text/html; charset=utf-8'),
      file('Build/game.loader.js', 'loader', 'text/javascript; charset=utf-8'),
      file('Build/game.wasm.br', 'wasm', 'application/wasm'),
      file('Build/game.data.br', 40, 'application/octet-stream'),
      file('StreamingAssets/video.mp4', 200, 'video/mp4'),
      file('img/a.png', 10, 'image/png'),
    ]
    const probes = sampleProbes(manifest(files).files, unityServing)
    assert.deepEqual(
      probes.map((p) => [p.urlPath, p.compare, p.contentType, p.contentEncoding]),
      [
        ['/', 'content', 'text/html', undefined],
        ['/about.html', 'content', 'text/html', undefined],
        ['/Build/game.data.br', 'content', 'application/octet-stream', 'br'],
        ['/Build/game.loader.js', 'content', 'text/javascript', undefined],
        ['/Build/game.wasm.br', 'content', 'application/wasm', 'br'],
        ['/StreamingAssets/video.mp4', 'size', 'video/mp4', undefined],
        ['/img/a.png', 'size', 'image/png', undefined],
      ],
    )
    assert.equal(probes[0]!.file.path, 'index.html')
  })

  test('a root page is always checked at /, first and by its bytes, however many pages and engine files follow', () => {
    const pages = Array.from({ length: 8 }, (_, i) => file(`level-${i}.html`, `level ${i}`, 'text/html'))
    const engine = Array.from({ length: 8 }, (_, i) =>
      file(`Build/part-${i}.wasm.br`, `w${i}`, 'application/wasm'),
    )
    const index = file('index.html', 'x'.repeat(64), 'text/html; charset=utf-8')
    const probes = sampleProbes(manifest([...engine, ...pages, index]).files, unityServing)
    assert.deepEqual(
      [probes[0]!.urlPath, probes[0]!.file.path, probes[0]!.compare, probes[0]!.contentType],
      ['/', 'index.html', 'content', 'text/html'],
    )
    assert.equal(probes.filter((p) => p.file.path === 'index.html').length, 1)
  })

  test('a site without index.html is checked by its files; a .wasm needs application/wasm even without an engine', () => {
    const probes = sampleProbes(
      manifest([file('game.wasm', 'w', 'application/wasm'), file('a.txt', 'a')]).files,
    )
    assert.deepEqual(
      probes.map((p) => [p.urlPath, p.compare, p.contentType]),
      [
        ['/game.wasm', 'content', 'application/wasm'],
        ['/a.txt', 'size', undefined],
      ],
    )
  })
})

describe('compareServed', () => {
  const wasm: Probe = {
    urlPath: '/Build/game.wasm.br',
    file: file('Build/game.wasm.br', 'wasm', 'application/wasm'),
    compare: 'content',
    contentType: 'application/wasm',
    contentEncoding: 'br',
  }
  const served = (over: Partial<Served> = {}): Served => ({
    status: 200,
    headers: { 'content-type': 'application/wasm', 'content-encoding': 'br' },
    bytes: 4,
    sha256: sha('wasm'),
    ...over,
  })

  test('the build’s bytes with its headers match', () => {
    assert.equal(compareServed(wasm, served()), undefined)
    assert.equal(
      compareServed(
        wasm,
        served({ headers: { 'content-type': 'Application/WASM', 'content-encoding': 'BR' } }),
      ),
      undefined,
    )
  })

  test('says what differs: the status, the size, the bytes, a header missing or other', () => {
    const reason = (over: Partial<Served>) => compareServed(wasm, served(over))?.reason
    assert.equal(reason({ status: 404 }), 'answered 404, not 200 with Build/game.wasm.br')
    assert.equal(reason({ bytes: 7 }), "was 7 bytes, not the build's Build/game.wasm.br of 4 bytes")
    assert.match(
      reason({ sha256: sha('mswa') })!,
      /^had other bytes than the build's Build\/game\.wasm\.br \(SHA-256 [0-9a-f]{12}…, not [0-9a-f]{12}…\)$/,
    )
    assert.equal(
      reason({ headers: { 'content-type': 'application/wasm' } }),
      'came without Content-Encoding: br',
    )
    assert.equal(
      reason({ headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'br' } }),
      'came with Content-Type application/octet-stream, not application/wasm',
    )
    assert.equal(
      reason({ headers: { 'content-type': 'application/wasm', 'content-encoding': 'gzip' } }),
      'came with Content-Encoding gzip, not br',
    )
  })

  test('a size probe compares the Content-Length only, and needs one', () => {
    const big: Probe = { urlPath: '/big.bin', file: file('big.bin', 100), compare: 'size' }
    assert.equal(compareServed(big, { status: 200, headers: {}, bytes: 100 }), undefined)
    assert.match(compareServed(big, { status: 200, headers: {}, bytes: 99 })!.reason, /was 99 bytes/)
    assert.match(compareServed(big, { status: 200, headers: {} })!.reason, /gave no Content-Length/)
  })

  test('a change is seen when the record served is another than before, whatever its size', () => {
    const before = sha('record before')
    const record: Probe = {
      urlPath: '/.well-known/gamehost.json',
      file: { path: '.well-known/gamehost.json', size: 0, sha256: before },
      compare: 'other',
    }
    const answer = (status: number, sha256: string): Served => ({ status, headers: {}, bytes: 99, sha256 })
    assert.equal(compareServed(record, answer(200, sha('record after'))), undefined)
    assert.equal(
      compareServed(record, answer(200, before))?.reason,
      'is still the record of the build it served before the publish',
    )
    assert.equal(compareServed(record, answer(404, sha('not found')))?.reason, 'answered 404')
    // A 200 that is no record (a placeholder page, a body cut at the bound) is not the change.
    assert.match(
      compareServed(record, { ...answer(200, sha('<html>')), notRecord: 'is not a record: not JSON' })!
        .reason,
      /^is not a record: not JSON$/,
    )
    assert.match(
      compareServed(record, {
        status: 200,
        headers: {},
        notRecord: `is larger than ${RECORD_MAX_BYTES} bytes`,
      })!.reason,
      /^is larger than \d+ bytes$/,
    )
  })
})

describe('pollUntilLive', () => {
  const probes = sampleProbes(manifest([file('index.html', 'new'), file('game.js', 'js')]).files)
  const fakeTime = () => {
    let now = 0
    const sleeps: number[] = []
    return {
      clock: { now: () => now },
      sleep: async (ms: number) => {
        sleeps.push(ms)
        now += ms
      },
      sleeps,
      advance: (ms: number) => (now += ms),
    }
  }
  const fresh = (probe: Probe): Served => ({
    status: 200,
    headers: {},
    bytes: probe.file.size,
    sha256: probe.file.sha256,
  })
  const stale: Served = { status: 200, headers: {}, bytes: 3, sha256: sha('old') }

  test('stale until the router catches up: verified at the first full match, waits doubling', async () => {
    const time = fakeTime()
    const fetched: string[] = []
    const fetch: FetchProbe = async (probe) => {
      fetched.push(probe.urlPath)
      return time.clock.now() >= 3000 ? fresh(probe) : stale
    }
    const result = await pollUntilLive({
      probes,
      fetch,
      timeoutMs: 60_000,
      ...time,
      signal: new AbortController().signal,
    })
    assert.equal(result.verified, true)
    assert.deepEqual(time.sleeps, [FIRST_WAIT_MS, 1000, 2000])
    assert.equal(result.attempts, 4)
    assert.equal(result.durationMs, 3500)
    // An attempt stops at its first mismatch; each probe is fetched until it matched, then no more.
    assert.deepEqual(fetched, ['/', '/', '/', '/', '/game.js'])
  })

  test('never served: stops at the bound, the last wait cut to it, with what was served instead', async () => {
    const time = fakeTime()
    const attempts: number[] = []
    const result = await pollUntilLive({
      probes,
      fetch: async () => stale,
      timeoutMs: 30_000,
      ...time,
      signal: new AbortController().signal,
      onNotYet: (n) => attempts.push(n),
    })
    assert.equal(result.verified, false)
    assert.equal(result.durationMs, 30_000)
    assert.deepEqual(time.sleeps, [500, 1000, 2000, 4000, 8000, LONGEST_WAIT_MS, 4500])
    assert.equal(result.attempts, 8)
    assert.deepEqual(attempts, [1, 2, 3, 4, 5, 6, 7, 8])
    assert.match(
      result.mismatch!.reason,
      /^was 3 bytes, not the build's index\.html of 3 bytes|^had other bytes/,
    )
    assert.equal(result.mismatch!.urlPath, '/')
  })

  test('a permanent failure (a name that does not resolve) ends at once', async () => {
    const time = fakeTime()
    const result = await pollUntilLive({
      probes,
      fetch: async (probe) => ({
        urlPath: probe.urlPath,
        reason: 'could not be fetched: DNS',
        permanent: true,
      }),
      timeoutMs: 30_000,
      ...time,
      signal: new AbortController().signal,
    })
    assert.equal(result.verified, false)
    assert.equal(result.attempts, 1)
    assert.deepEqual(time.sleeps, [])
  })

  test('a cancelled run stops polling with its reason', async () => {
    const controller = new AbortController()
    const time = fakeTime()
    const reason = new Error('cancelled')
    await assert.rejects(
      pollUntilLive({
        probes,
        fetch: async () => {
          controller.abort(reason)
          return stale
        },
        timeoutMs: 30_000,
        ...time,
        signal: controller.signal,
      }),
      (error) => error === reason,
    )
  })
})

describe('hostFetcher', () => {
  test('a host under localhost is fetched at 127.0.0.1 by its name, bytes as sent, headers read', async () => {
    const seen: IncomingHttpHeaders[] = []
    const body = Buffer.from('wasm-bytes')
    const record = recordFile(buildManifest([], []), { commit: 'abc' }).bytes
    const server = createServer((req, res) => {
      seen.push(req.headers)
      if (req.url === `/${RECORD_PATH}`) return void res.end(record)
      res.writeHead(200, {
        'content-type': 'application/wasm',
        'content-encoding': 'br',
        'content-length': body.length,
      })
      res.end(req.method === 'HEAD' ? undefined : body)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    const dispatcher = new Agent()
    try {
      const fetch = hostFetcher(`http://game--pr-1.localhost:${port}/`, {
        dispatcher,
        signal: new AbortController().signal,
        stallMs: 5_000,
      })
      const probe: Probe = {
        urlPath: '/Build/a b.wasm.br',
        file: { ...file('Build/a b.wasm.br', 'wasm-bytes'), contentType: 'application/wasm' },
        compare: 'content',
        contentEncoding: 'br',
        contentType: 'application/wasm',
      }
      const served = (await fetch(probe)) as Served
      assert.equal(compareServed(probe, served), undefined)
      assert.equal(seen[0]!.host, `game--pr-1.localhost:${port}`)
      assert.equal(seen[0]!['accept-encoding'], 'identity')
      const size = (await fetch({ ...probe, compare: 'size' })) as Served
      assert.equal(size.bytes, body.length)
      assert.equal(size.sha256, undefined)
      // A record compared with the one before is read whole, whatever size the probe names.
      const recordProbe: Probe = { urlPath: `/${RECORD_PATH}`, file: file(RECORD_PATH, ''), compare: 'other' }
      const other = (await fetch(recordProbe)) as Served
      assert.equal(other.bytes, record.length)
      assert.equal(other.sha256, sha(record))
      assert.equal(other.notRecord, undefined)
      const notRecord = (await fetch({
        ...probe,
        file: { ...probe.file, size: 0 },
        compare: 'other',
      })) as Served
      assert.match(notRecord.notRecord!, /^is not a record: /, 'a body that is no record says so')
    } finally {
      await dispatcher.close()
      server.close()
    }
  })

  test('a host name that does not resolve is named, and permanent', async () => {
    const dispatcher = new Agent()
    try {
      const fetch = hostFetcher('https://game--pr-1.gamehost-test.invalid/', {
        dispatcher,
        signal: new AbortController().signal,
        stallMs: 5_000,
      })
      const probe = sampleProbes(manifest([file('index.html', 'x')]).files)[0]!
      assert.deepEqual(await fetch(probe), {
        urlPath: '/',
        reason:
          'could not be fetched: DNS: the host name game--pr-1.gamehost-test.invalid does not resolve (ENOTFOUND)',
        permanent: true,
      })
    } finally {
      await dispatcher.close()
    }
  })
})

describe('notLive', () => {
  const seen: Verification = {
    verified: false,
    url: 'https://g--pr-1.rivet.game/',
    durationMs: 300_000,
    attempts: 34,
    checked: [],
    mismatch: { urlPath: '/', reason: 'answered 404, not 200 with index.html' },
  }
  const published: Published = {
    versionId: 'v-new',
    versionName: 'build 2',
    replacedVersionId: 'v-old',
    domain: undefined,
    created: true,
    url: seen.url,
  }
  const account =
    'https://g--pr-1.rivet.game/ did not serve this build within 300.0 s (34 checks): https://g--pr-1.rivet.game/ answered 404, not 200 with index.html'

  test('rollback and fail throw the account and what became of the namespace; warn warns', () => {
    assert.throws(
      () => notLive('rollback', { ...seen, rolledBackTo: 'v-old' }, published, 'pr-1', memoryLogger()),
      (error) =>
        error instanceof NotLiveError &&
        error.message ===
          `Not live: ${account}. Namespace pr-1 was put back on version v-old, which it served before.`,
    )
    assert.throws(
      () => notLive('rollback', seen, { ...published, replacedVersionId: undefined }, 'pr-1', memoryLogger()),
      {
        message: `Not live: ${account}. Namespace pr-1 served no version before this run, so there is none to put it back on: it stays on version 'build 2' (v-new).`,
      },
    )
    assert.throws(() => notLive('fail', seen, published, 'pr-1', memoryLogger()), {
      message: `Not live: ${account}. on-verify-failure is fail: namespace pr-1 stays on version 'build 2' (v-new).`,
    })
    const logger = memoryLogger()
    notLive('warn', seen, published, 'pr-1', logger)
    assert.deepEqual(logger.lines, [
      `warning: Not seen live: Not seen live: ${account}. on-verify-failure is warn: the run succeeds with verified false, and namespace pr-1 stays on version 'build 2' (v-new).`,
    ])
  })
})
