import { test, describe } from 'node:test'
import type { TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { request } from 'node:http'
import type { CreateCdnSiteResponse, PresignedRequest, ServiceErrorBody } from '../../src/api/types.ts'
import {
  startEmulator,
  type Emulator,
  type EmulatorOptions,
  type FaultCounters,
  type FaultOptions,
} from '../../src/emulator/index.ts'
import { resolveOptions } from '../../src/emulator/options.ts'
import { checkScriptRoutes } from '../../src/emulator/faults.ts'
import { routeKeys } from '../../src/emulator/routes/index.ts'

const TOKEN = 'gamehost-demo-token'
const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const SITES = `/cloud/games/${GAME}/cdn/sites`
const NAMESPACES = `/cloud/games/${GAME}/namespaces`
const AVATARS = `/cloud/games/${GAME}/avatars`
const NO_FAULTS: FaultCounters = {
  putErrors: 0,
  putResets: 0,
  putStalls: 0,
  putWrongEtags: 0,
  apiErrors: 0,
  api429s: 0,
  apiResets: 0,
  publishesLost: 0,
}

async function start(t: TestContext, faults: FaultOptions, options: EmulatorOptions = {}): Promise<Emulator> {
  const emulator = await startEmulator({ rateLimit: false, ...options, faults })
  t.after(() => emulator.close())
  return emulator
}

interface Answer<T> {
  status: number
  headers: Headers
  body: T
}

async function call<T = ServiceErrorBody>(
  emulator: Emulator,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer<T>> {
  const response = await fetch(`${emulator.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: response.status, headers: response.headers, body: (await response.json()) as T }
}

function createSite(emulator: Emulator, sizes: number[]) {
  const files = sizes.map((size, index) => ({ path: `file-${index}.bin`, content_length: size }))
  return call<CreateCdnSiteResponse>(emulator, 'POST', SITES, { display_name: 'Web Client', files })
}

async function siteOf(emulator: Emulator, sizes: number[]): Promise<CreateCdnSiteResponse> {
  const answer = await createSite(emulator, sizes)
  assert.equal(answer.status, 200, JSON.stringify(answer.body))
  return answer.body
}

function createNamespace(emulator: Emulator, nameId: string) {
  return call(emulator, 'POST', NAMESPACES, {
    display_name: 'Faulty',
    name_id: nameId,
    version_id: '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
  })
}

function namespaceCount(emulator: Emulator, nameId: string): number {
  return emulator.namespaces(GAME).filter((namespace) => namespace.nameId === nameId).length
}

function bytesOf(length: number, fill = 0): Buffer {
  return Buffer.from(Array.from({ length }, (_, index) => (index * 7 + fill) % 256))
}

function md5(bytes: Buffer): string {
  return createHash('md5').update(bytes).digest('hex')
}

function put(presigned: PresignedRequest | undefined, bytes: Buffer, signal?: AbortSignal) {
  return fetch(presigned?.url ?? '', { method: 'PUT', body: bytes, signal })
}

/** Waits for the emulator to record `count` requests (it records one once its connection is done). */
async function recorded(emulator: Emulator, count: number) {
  for (let tries = 0; emulator.requests.length < count && tries < 200; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return emulator.requests
}

describe('fault options', () => {
  test('are checked: rates in [0, 1], counts non-negative integers, script keys name routes', () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ putErrorRate: 1.5 }, /faults\.putErrorRate must be a number from 0 to 1, got 1\.5/],
      [{ putResetRate: -0.1 }, /faults\.putResetRate/],
      [{ putStallRate: '0.5' }, /faults\.putStallRate/],
      [{ putWrongEtagRate: NaN }, /faults\.putWrongEtagRate/],
      [{ apiErrorRate: 2 }, /faults\.apiErrorRate/],
      [{ putStallCount: 1.5 }, /faults\.putStallCount must be a non-negative integer/],
      [{ putStallCount: -1 }, /faults\.putStallCount/],
      [{ seed: 0.5 }, /faults\.seed must be an integer/],
      [{ putErrorRat: 0.1 }, /unknown key "putErrorRat"/],
      [{ script: { 'POST /cloud/nope': ['503'] } }, /faults\.script\["POST \/cloud\/nope"\]: no such route/],
      [{ script: { [`GET ${SITES}`]: ['503'] } }, /no such route/],
      [{ script: { 'GET /cloud/games/:game_id/cdn/sites': ['503'] } }, /no such route/],
      [
        { script: { 'GET /cloud/games/:game_id/avatars': ['500'] } },
        /must be an array of "429", "503" or "reset"/,
      ],
      [{ script: { 'GET /cloud/games/:game_id/avatars': '503' } }, /must be an array/],
      [{ script: [] }, /faults\.script must be an object/],
      [[], /faults must be an object/],
    ]
    for (const [faults, message] of bad) {
      assert.throws(
        () => checkScriptRoutes(resolveOptions({ faults: faults as FaultOptions }).faults, routeKeys()),
        message,
        JSON.stringify(faults),
      )
    }
    const resolved = resolveOptions({
      faults: {
        putErrorRate: 0,
        apiErrorRate: 1,
        script: { 'POST /cloud/games/:game_id/cdn/sites': ['429'] },
      },
    }).faults
    assert.equal(resolved?.seed, 1)
    assert.equal(resolved?.putStallCount, 0)
    assert.equal(resolveOptions({}).faults, undefined)
  })

  test('startEmulator refuses bad faults', async () => {
    await assert.rejects(startEmulator({ faults: { putResetRate: 7 } }), /faults\.putResetRate/)
    await assert.rejects(
      startEmulator({ faults: { script: { 'POST /cloud/nope': ['503'] } } }),
      /faults\.script\["POST \/cloud\/nope"\]: no such route/,
    )
  })

  test('without faults nothing is injected and the counters stay at 0', async (t) => {
    const emulator = await startEmulator({ rateLimit: false })
    t.after(() => emulator.close())
    const site = await siteOf(emulator, [10])
    assert.equal((await put(site.presigned_requests[0], bytesOf(10))).status, 200)
    assert.deepEqual(emulator.faults, NO_FAULTS)
    assert.ok(emulator.requests.every((entry) => entry.fault === undefined))
  })
})

describe('store PUT faults', () => {
  test('putErrorRate 1: every PUT is a 503 SlowDown, nothing is stored', async (t) => {
    const emulator = await start(t, { putErrorRate: 1 })
    const site = await siteOf(emulator, [10, 2000, 0])
    for (const presigned of site.presigned_requests) {
      const response = await put(presigned, bytesOf(presigned.content_length))
      assert.equal(response.status, 503)
      assert.match(response.headers.get('content-type') ?? '', /^application\/xml/)
      const xml = await response.text()
      assert.match(xml, /^<\?xml version="1\.0" encoding="UTF-8"\?><Error><Code>SlowDown<\/Code>/)
      assert.match(xml, new RegExp(`<RequestId>${response.headers.get('x-amz-request-id')}</RequestId>`))
    }
    assert.ok(emulator.site(site.site_id)?.parts.every((part) => !part.uploaded))
    assert.deepEqual(emulator.faults, { ...NO_FAULTS, putErrors: 3 })
    const puts = emulator.requests.filter((entry) => entry.method === 'PUT')
    assert.deepEqual(
      puts.map((entry) => [entry.status, entry.fault]),
      [
        [503, 'put-error'],
        [503, 'put-error'],
        [503, 'put-error'],
      ],
    )
  })

  test('putResetRate 1: the connection is cut mid-body, the client sees a connection error, nothing is stored', async (t) => {
    const emulator = await start(t, { putResetRate: 1 })
    const site = await siteOf(emulator, [1, 256 * 1024, 0])
    for (const presigned of site.presigned_requests) {
      await assert.rejects(put(presigned, bytesOf(presigned.content_length)), (error: unknown) => {
        assert.ok(error instanceof TypeError, String(error))
        return true
      })
    }
    const requests = await recorded(emulator, 4)
    assert.deepEqual(
      requests.slice(1).map((entry) => [entry.status, entry.fault]),
      [
        [499, 'put-reset'],
        [499, 'put-reset'],
        [499, 'put-reset'],
      ],
    )
    assert.ok(emulator.site(site.site_id)?.parts.every((part) => !part.uploaded))
    assert.deepEqual(emulator.faults, { ...NO_FAULTS, putResets: 3 })
  })

  test('putStallCount 1: the first PUT gets no answer, the second succeeds', async (t) => {
    const emulator = await start(t, { putStallCount: 1 })
    const bytes = bytesOf(100)
    const site = await siteOf(emulator, [bytes.length])
    const [presigned] = site.presigned_requests
    await assert.rejects(put(presigned, bytes, AbortSignal.timeout(200)), { name: 'TimeoutError' })
    const response = await put(presigned, bytes)
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('etag'), `"${md5(bytes)}"`)
    assert.equal(emulator.site(site.site_id)?.parts[0]?.md5, md5(bytes))
    const requests = await recorded(emulator, 3)
    assert.deepEqual(
      requests.slice(1).map((entry) => [entry.status, entry.fault]),
      [
        [499, 'put-stall'],
        [200, undefined],
      ],
    )
    assert.deepEqual(emulator.faults, { ...NO_FAULTS, putStalls: 1 })
  })

  test('a stalled PUT never reads its body and does not keep close() from finishing', async () => {
    const emulator = await startEmulator({ rateLimit: false, faults: { putStallRate: 1 } })
    const length = 48 * 1024 * 1024
    const site = await siteOf(emulator, [length])
    let clientError: Error | undefined
    const req = request(site.presigned_requests[0]?.url ?? '', {
      method: 'PUT',
      headers: { 'content-length': length },
    })
    const ended = new Promise<void>((resolve) => {
      req.on('error', (error) => (clientError = error))
      req.on('close', () => resolve())
    })
    // The whole body is offered; the server never reads it, so most of it stays with the client.
    const flushed = new Promise<boolean>((resolve) => {
      req.write(Buffer.alloc(length), () => resolve(true))
      setTimeout(() => resolve(false), 100)
    })
    assert.equal(await flushed, false, 'the body was not read')
    assert.deepEqual(emulator.faults, { ...NO_FAULTS, putStalls: 1 })
    const started = performance.now()
    await emulator.close()
    assert.ok(performance.now() - started < 500, 'close() cut the stalled connection at once')
    await ended
    assert.ok(clientError, 'the client saw its connection cut')
    assert.equal(emulator.requests.at(-1)?.status, 499)
    assert.equal(emulator.site(site.site_id)?.parts[0]?.uploaded, false)
  })

  test('putWrongEtagRate 1: one byte is flipped in transit, the ETag is the MD5 of what was stored', async (t) => {
    const emulator = await start(t, { putWrongEtagRate: 1 })
    const bytes = bytesOf(1000)
    const site = await siteOf(emulator, [bytes.length, 0])
    const [presigned, empty] = site.presigned_requests
    const response = await put(presigned, bytes)
    assert.equal(response.status, 200)
    const etag = response.headers.get('etag') ?? ''
    assert.match(etag, /^"[0-9a-f]{32}"$/)
    assert.notEqual(etag, `"${md5(bytes)}"`, 'only the ETag tells the client')
    assert.equal(`"${emulator.site(site.site_id)?.parts[0]?.md5}"`, etag)
    // An empty part has no byte to flip: it is stored as sent.
    const emptyResponse = await put(empty, Buffer.alloc(0))
    assert.equal(emptyResponse.headers.get('etag'), `"${md5(Buffer.alloc(0))}"`)
    assert.equal((await call(emulator, 'POST', `/cloud/uploads/${site.upload_id}/complete`)).status, 200)
    const stored = await emulator.readUploadedFile(site.site_id, 'file-0.bin')
    assert.equal(md5(stored), etag.slice(1, -1))
    const differing = [...stored].filter((byte, index) => byte !== bytes[index]).length
    assert.equal(differing, 1)
    assert.deepEqual(emulator.faults, { ...NO_FAULTS, putWrongEtags: 1 })
    assert.equal(emulator.requests.filter((entry) => entry.fault === 'put-wrong-etag').length, 1)
  })

  test('a corrupted part is replaced by a later clean PUT of it', async (t) => {
    // With seed 4, the first PUT is corrupted and the second is not.
    const emulator = await start(t, { seed: 4, putWrongEtagRate: 0.5 })
    const bytes = bytesOf(300, 3)
    const site = await siteOf(emulator, [bytes.length])
    const etags: string[] = []
    for (let attempt = 0; attempt < 10 && etags.at(-1) !== `"${md5(bytes)}"`; attempt++) {
      const response = await put(site.presigned_requests[0], bytes)
      assert.equal(response.status, 200)
      etags.push(response.headers.get('etag') ?? '')
    }
    assert.equal(etags.length, 2)
    assert.notEqual(etags[0], etags[1])
    assert.equal(emulator.faults.putWrongEtags, 1)
    assert.equal((await call(emulator, 'POST', `/cloud/uploads/${site.upload_id}/complete`)).status, 200)
    assert.deepEqual(await emulator.readUploadedFile(site.site_id, 'file-0.bin'), bytes)
  })

  test('a PUT the store refuses anyway gets its refusal, not a fault', async (t) => {
    const emulator = await start(t, { putErrorRate: 1, putStallCount: 1 })
    const site = await siteOf(emulator, [10])
    const url = new URL(site.presigned_requests[0]?.url ?? '')
    url.searchParams.set('signature', '00')
    const tampered = await fetch(url, { method: 'PUT', body: bytesOf(10) })
    assert.equal(tampered.status, 403)
    assert.match(await tampered.text(), /<Code>SignatureDoesNotMatch<\/Code>/)
    const wrongLength = await fetch(site.presigned_requests[0]?.url ?? '', {
      method: 'PUT',
      body: bytesOf(9),
    })
    assert.equal(wrongLength.status, 403)
    await wrongLength.arrayBuffer()
    assert.deepEqual(emulator.faults, NO_FAULTS)
    // The stall count is still there for the first PUT the store accepts.
    await assert.rejects(put(site.presigned_requests[0], bytesOf(10), AbortSignal.timeout(50)))
    assert.equal(emulator.faults.putStalls, 1)
  })
})

describe('API faults', () => {
  test('apiErrorRate 1: every API call is a 503 and changes nothing; refusals, docs and sites are untouched', async (t) => {
    const emulator = await start(t, { apiErrorRate: 1 })
    const before = emulator.namespaces(GAME).length
    const answers = [
      await call(emulator, 'GET', AVATARS),
      await createSite(emulator, [1]),
      await createNamespace(emulator, 'down'),
      await call(emulator, 'POST', '/cloud/groups/validate', { display_name: 'Group' }),
    ]
    for (const answer of answers) {
      const body = answer.body as ServiceErrorBody
      assert.equal(answer.status, 503, JSON.stringify(body))
      assert.equal(body.code, 'API_SERVICE_UNAVAILABLE')
      assert.equal(body.ray_id, answer.headers.get('rvt-ray-id'))
      assert.equal(body.documentation, `${emulator.url}/docs/errors/API_SERVICE_UNAVAILABLE`)
    }
    assert.equal(emulator.namespaces(GAME).length, before)
    assert.equal(emulator.sites(GAME).length, 0)
    assert.deepEqual(emulator.faults, { ...NO_FAULTS, apiErrors: 4 })

    const unauthorized = await fetch(`${emulator.url}${AVATARS}`)
    assert.equal(unauthorized.status, 401)
    await unauthorized.arrayBuffer()
    assert.equal((await call(emulator, 'GET', '/cloud/nope')).status, 404)
    const doc = await fetch(`${emulator.url}/docs/errors/API_SERVICE_UNAVAILABLE`)
    assert.equal(doc.status, 200)
    assert.match(await doc.text(), /^API_SERVICE_UNAVAILABLE \(HTTP 503\)/)
    const served = await fetch(`${emulator.url}/_sites/unknown/index.html`)
    assert.equal(served.status, 404)
    await served.arrayBuffer()
    assert.equal(emulator.faults.apiErrors, 4)
  })

  test('a scripted 429 is API_RATE_LIMIT with retry-after 1 s ahead; the next call creates exactly one site', async (t) => {
    const clock = Date.parse('2025-06-01T12:00:00Z')
    const emulator = await start(
      t,
      { script: { 'POST /cloud/games/:game_id/cdn/sites': ['429'] } },
      { now: () => clock },
    )
    const limited = await createSite(emulator, [5])
    const body = limited.body as unknown as ServiceErrorBody
    assert.equal(limited.status, 429)
    assert.equal(body.code, 'API_RATE_LIMIT')
    assert.equal(limited.headers.get('retry-after'), new Date(clock + 1000).toUTCString())
    assert.equal(body.metadata, clock + 1000)
    assert.equal(emulator.sites(GAME).length, 0)
    const created = await createSite(emulator, [5])
    assert.equal(created.status, 200)
    assert.deepEqual(
      emulator.sites(GAME).map((site) => site.siteId),
      [created.body.site_id],
    )
    assert.deepEqual(emulator.faults, { ...NO_FAULTS, api429s: 1 })
  })

  test('a scripted 503 on namespace creation creates nothing; the next call creates one', async (t) => {
    const emulator = await start(t, { script: { 'POST /cloud/games/:game_id/namespaces': ['503'] } })
    const refused = await createNamespace(emulator, 'flaky')
    assert.equal(refused.status, 503)
    assert.equal(refused.body.code, 'API_SERVICE_UNAVAILABLE')
    assert.equal(namespaceCount(emulator, 'flaky'), 0)
    assert.equal((await createNamespace(emulator, 'flaky')).status, 200)
    assert.equal(namespaceCount(emulator, 'flaky'), 1)
    assert.deepEqual(emulator.faults, { ...NO_FAULTS, apiErrors: 1 })
  })

  test('a scripted reset cuts the connection before the body is read and creates nothing', async (t) => {
    const emulator = await start(t, { script: { 'POST /cloud/games/:game_id/namespaces': ['reset'] } })
    await assert.rejects(createNamespace(emulator, 'cut'), TypeError)
    assert.equal(namespaceCount(emulator, 'cut'), 0)
    const requests = await recorded(emulator, 1)
    assert.deepEqual(requests[0], { method: 'POST', path: NAMESPACES, status: 499, fault: 'api-reset' })
    assert.equal((await createNamespace(emulator, 'cut')).status, 200)
    assert.equal(namespaceCount(emulator, 'cut'), 1)
    assert.deepEqual(emulator.faults, { ...NO_FAULTS, apiResets: 1 })
  })

  test('each call of a scripted route takes one answer, in order; other routes go through', async (t) => {
    const logLines: string[] = []
    const emulator = await start(
      t,
      { script: { 'GET /cloud/games/:game_id/avatars': ['503', '429', '503'] } },
      { log: (line) => logLines.push(line) },
    )
    const statuses: number[] = []
    for (let index = 0; index < 4; index++) {
      statuses.push((await call(emulator, 'GET', AVATARS)).status)
      const validate = await call(emulator, 'POST', '/cloud/groups/validate', { display_name: 'Group' })
      assert.equal(validate.status, 200)
    }
    assert.deepEqual(statuses, [503, 429, 503, 200])
    assert.deepEqual(emulator.faults, { ...NO_FAULTS, apiErrors: 2, api429s: 1 })
    assert.ok(logLines.includes(`GET ${AVATARS} 503 (fault: api-error)`), logLines.join('\n'))
    assert.ok(logLines.includes(`GET ${AVATARS} 429 (fault: api-429)`), logLines.join('\n'))
    assert.ok(logLines.includes(`GET ${AVATARS} 200`), logLines.join('\n'))
  })
})

describe('reproducible faults', () => {
  const faults = { putErrorRate: 0.25, putResetRate: 0.15, putWrongEtagRate: 0.25, apiErrorRate: 0.3 }

  /** The same sequence of requests every time: what each one met, as the client saw it. */
  async function run(t: TestContext, seed: number) {
    const emulator = await start(t, { seed, ...faults })
    const outcomes: string[] = []
    const sizes = Array.from({ length: 16 }, (_, index) => 50 + index)
    let site: CreateCdnSiteResponse | undefined
    for (let attempt = 0; attempt < 20 && !site; attempt++) {
      const answer = await createSite(emulator, sizes)
      outcomes.push(`site ${answer.status}`)
      if (answer.status === 200) site = answer.body
    }
    assert.ok(site, 'the site was created within 20 attempts')
    for (const presigned of site.presigned_requests) {
      const bytes = bytesOf(presigned.content_length)
      try {
        const response = await put(presigned, bytes)
        const etag = response.headers.get('etag')
        await response.arrayBuffer()
        outcomes.push(`put ${response.status}${etag && etag !== `"${md5(bytes)}"` ? ' bad etag' : ''}`)
      } catch {
        outcomes.push('put connection error')
      }
    }
    return { outcomes, counters: emulator.faults }
  }

  test('the same seed and requests inject the same faults; another seed injects others', async (t) => {
    // Seed 7 happens to inject every kind of fault into this sequence.
    const first = await run(t, 7)
    const again = await run(t, 7)
    const other = await run(t, 8)
    assert.deepEqual(again, first)
    assert.notDeepEqual(other.outcomes, first.outcomes)
    const { putErrors, putResets, putWrongEtags } = first.counters
    const { apiErrors } = first.counters
    assert.ok(putErrors && putResets && putWrongEtags && apiErrors, JSON.stringify(first.counters))
    const count = (outcome: string) => first.outcomes.filter((entry) => entry === outcome).length
    assert.equal(count('put 503'), putErrors)
    assert.equal(count('put connection error'), putResets)
    assert.equal(count('put 200 bad etag'), putWrongEtags)
    assert.equal(count('site 503'), first.counters.apiErrors)
  })
})
