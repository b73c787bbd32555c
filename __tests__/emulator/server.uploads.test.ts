import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { request } from 'node:http'
import type {
  CreateCdnSiteResponse,
  FileDescriptor,
  PresignedRequest,
  ServiceErrorBody,
} from '../../src/api/types.ts'
import { startEmulator, type Emulator } from '../../src/emulator/index.ts'

const TOKEN = 'gamehost-demo-token'
const SITES = '/cloud/games/4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86/cdn/sites'
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'
const HOUR_MS = 60 * 60 * 1000

interface Answer<T> {
  status: number
  headers: Headers
  body: T
}

async function post<T = ServiceErrorBody>(
  emulator: Emulator,
  path: string,
  body?: unknown,
  token = TOKEN,
): Promise<Answer<T>> {
  const response = await fetch(`${emulator.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: response.status, headers: response.headers, body: (await response.json()) as T }
}

async function createSite(emulator: Emulator, files: FileDescriptor[]): Promise<CreateCdnSiteResponse> {
  const answer = await post<CreateCdnSiteResponse>(emulator, SITES, { display_name: 'Web Client', files })
  assert.equal(answer.status, 200, JSON.stringify(answer.body))
  return answer.body
}

function put(url: string, bytes: Buffer, headers: Record<string, string> = {}) {
  return fetch(url, { method: 'PUT', body: bytes, headers })
}

function md5(bytes: Buffer): string {
  return createHash('md5').update(bytes).digest('hex')
}

function slice(bytes: Buffer, presigned: PresignedRequest): Buffer {
  return bytes.subarray(presigned.byte_offset, presigned.byte_offset + presigned.content_length)
}

/** Waits until the server has recorded `count` requests (it records a request once its connection is done). */
async function recordedRequests(emulator: Emulator, count: number) {
  for (let tries = 0; emulator.requests.length < count && tries < 200; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return emulator.requests
}

interface RawAnswer {
  status: number
  body: string
}

/** A PUT with a chunked body (no Content-Length), which fetch cannot send from a Buffer. */
function chunkedPut(url: string, chunks: Buffer[]): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT' }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    for (const chunk of chunks) req.write(chunk)
    req.end()
  })
}

/** A PUT whose connection is cut after `sent`, before the declared Content-Length was reached. */
function cutOffPut(url: string, sent: Buffer, contentLength: number): Promise<void> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'PUT', headers: { 'content-length': contentLength } })
    req.on('error', () => resolve())
    req.on('close', () => resolve())
    req.write(sent, () => req.destroy())
  })
}

describe('CDN sites: creation', () => {
  let emulator: Emulator

  before(async () => {
    emulator = await startEmulator({ rateLimit: false, multipartThreshold: 64, partSize: 100, maxParts: 3 })
  })
  after(() => emulator.close())

  test('plans one request per part, in files order then part order', async () => {
    const site = await createSite(emulator, [
      { path: 'index.html', content_length: 63, content_type: 'text/html' },
      { path: 'at-threshold.bin', content_length: 64 },
      { path: 'game.wasm', content_length: 250, content_type: 'application/wasm' },
      { path: 'empty.txt', content_length: 0 },
    ])
    const plan = site.presigned_requests.map(({ path, byte_offset, content_length }) => [
      path,
      byte_offset,
      content_length,
    ])
    assert.deepEqual(plan, [
      ['index.html', 0, 63],
      ['at-threshold.bin', 0, 64],
      ['game.wasm', 0, 100],
      ['game.wasm', 100, 100],
      ['game.wasm', 200, 50],
      ['empty.txt', 0, 0],
    ])
    for (const presigned of site.presigned_requests) {
      // The object store's own origin, not the API's, in S3's presigned form.
      assert.notEqual(emulator.storeUrl, emulator.url)
      assert.ok(presigned.url.startsWith(`${emulator.storeUrl}/gamehost-cdn/${site.upload_id}/`))
      const query = new URL(presigned.url).searchParams
      assert.equal(query.get('X-Amz-Algorithm'), 'AWS4-HMAC-SHA256')
      // 1 hour for a whole file, 6 hours for a part.
      assert.equal(query.get('X-Amz-Expires'), query.has('partNumber') ? '21600' : '3600')
      assert.match(query.get('X-Amz-Signature') ?? '', /^[0-9a-f]{64}$/)
      assert.match(query.get('X-Amz-Credential') ?? '', /^AKIA\w+\/\d{8}\/us-east-1\/s3\/aws4_request$/)
    }
    const signedHeaders = site.presigned_requests.map((p) =>
      new URL(p.url).searchParams.get('X-Amz-SignedHeaders'),
    )
    // A part's content type was set with its multipart upload: it is not signed.
    assert.deepEqual(signedHeaders, [
      'content-length;content-type;host',
      'content-length;host',
      'content-length;host',
      'content-length;host',
      'content-length;host',
      'content-length;host',
    ])
    const view = emulator.site(site.site_id)
    assert.equal(view?.uploadId, site.upload_id)
    assert.equal(view?.completed, false)
    assert.equal(view?.parts.length, 6)
    assert.ok(view?.parts.every((part) => !part.uploaded))
    assert.deepEqual(
      emulator.sites('4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86').map((candidate) => candidate.siteId),
      [site.site_id],
    )
  })

  test('an invalid display name is the 500 ERROR of the service (it checks the name inside the creation)', async () => {
    for (const displayName of ['', ' Leading', 'x'.repeat(129), 'Two  Spaces']) {
      const answer = await post(emulator, SITES, { display_name: displayName, files: [] })
      assert.equal(answer.status, 500, displayName)
      assert.deepEqual([answer.body.code, answer.body.message], ['ERROR', 'An internal error has occurred.'])
    }
  })

  test('a negative content_length is 400 MATCHMAKER_INVALID_VERSION_CONFIG, after the body parsed', async () => {
    const negative = [
      { path: 'index.html', content_length: 1 },
      { path: 'a', content_length: -1 },
    ]
    const answer = await post(emulator, SITES, { display_name: 'Web Client', files: negative })
    assert.equal(answer.status, 400)
    assert.equal(answer.body.code, 'MATCHMAKER_INVALID_VERSION_CONFIG')
    assert.match(answer.body.message, /files\[1\]\.content_length/)
    // Before the display name is looked at; a body that does not parse is refused first.
    assert.equal((await post(emulator, SITES, { display_name: '', files: negative })).status, 400)
    const unparsed = [...negative, { path: 'b' }]
    assert.equal(
      (await post(emulator, SITES, { display_name: 'Web Client', files: unparsed })).body.code,
      'API_BAD_BODY',
    )
  })

  test('malformed files are API_BAD_BODY', async () => {
    for (const files of [
      'index.html',
      [{ path: '', content_length: 1 }],
      [{ path: 'a', content_length: 1.5 }],
      [{ path: 'a' }],
      [{ path: 'a', content_length: 1, content_type: 7 }],
    ]) {
      const answer = await post(emulator, SITES, { display_name: 'Web Client', files })
      assert.equal(answer.status, 400, JSON.stringify(files))
      assert.equal(answer.body.code, 'API_BAD_BODY')
    }
  })

  test('a file needing more than maxParts parts is UPLOAD_TOO_LARGE', async () => {
    await createSite(emulator, [{ path: 'three-parts.bin', content_length: 300 }])
    const answer = await post(emulator, SITES, {
      display_name: 'Web Client',
      files: [{ path: 'four-parts.bin', content_length: 301 }],
    })
    assert.equal(answer.status, 400)
    assert.equal(answer.body.code, 'UPLOAD_TOO_LARGE')
  })

  test('duplicate paths are a 500 ERROR', async () => {
    const files = [
      { path: 'index.html', content_length: 1 },
      { path: 'index.html', content_length: 2 },
    ]
    const answer = await post(emulator, SITES, { display_name: 'Web Client', files })
    assert.equal(answer.status, 500)
    assert.deepEqual([answer.body.code, answer.body.message], ['ERROR', 'An internal error has occurred.'])
  })

  test('a token for another game is API_FORBIDDEN', async () => {
    const answer = await post(
      emulator,
      SITES,
      { display_name: 'Web Client', files: [] },
      'gamehost-other-token',
    )
    assert.equal(answer.status, 403)
    assert.equal(answer.body.code, 'API_FORBIDDEN')
  })
})

describe('CDN sites: the size limit of the real service', () => {
  let emulator: Emulator

  before(async () => {
    emulator = await startEmulator({ rateLimit: false })
  })
  after(() => emulator.close())

  test('a total of 10^9 bytes or more is UPLOAD_TOO_LARGE, just under passes as one PUT per file', async () => {
    const files = (total: number) => [
      { path: 'a.bin', content_length: total - 1 },
      { path: 'b.bin', content_length: 1 },
    ]
    const tooLarge = await post(emulator, SITES, { display_name: 'Web Client', files: files(1_000_000_000) })
    assert.equal(tooLarge.status, 400)
    assert.equal(tooLarge.body.code, 'UPLOAD_TOO_LARGE')
    const site = await createSite(emulator, files(999_999_999))
    // By default (v24.6) a file of 5 MiB or more is a multipart upload in 100 MiB parts.
    const MiB = 1024 * 1024
    assert.deepEqual(
      site.presigned_requests.map((p) => [p.path, p.byte_offset, p.content_length]),
      [
        ...Array.from({ length: 9 }, (_, i) => ['a.bin', i * 100 * MiB, 100 * MiB]),
        ['a.bin', 900 * MiB, 999_999_998 - 900 * MiB],
        ['b.bin', 0, 1],
      ],
    )
    const whole = await startEmulator({ rateLimit: false, multipartThreshold: Number.POSITIVE_INFINITY })
    try {
      // multipartThreshold Infinity keeps the v24.5 shape: one PUT per file, whatever its size.
      const old = await createSite(whole, files(999_999_999))
      assert.deepEqual(
        old.presigned_requests.map((p) => [p.path, p.byte_offset, p.content_length]),
        [
          ['a.bin', 0, 999_999_998],
          ['b.bin', 0, 1],
        ],
      )
    } finally {
      await whole.close()
    }
  })
})

describe('CDN sites: upload, complete and serve', () => {
  let emulator: Emulator
  let clock = Date.parse('2025-06-01T12:00:00Z')

  before(async () => {
    emulator = await startEmulator({ multipartThreshold: 64, partSize: 100, now: () => clock })
  })
  after(() => emulator.close())

  test('uploads a multipart file and a page, completes, serves them', async () => {
    const game = randomBytes(250)
    const page = Buffer.from('<!doctype html><title>Demo</title>')
    const files = [
      { path: 'index.html', bytes: page, type: 'text/html' },
      { path: 'build/game.data', bytes: game, type: undefined },
      { path: 'empty.txt', bytes: Buffer.alloc(0), type: 'text/plain' },
    ]
    const site = await createSite(
      emulator,
      files.map(({ path, bytes, type }) => ({ path, content_length: bytes.length, content_type: type })),
    )
    for (const presigned of site.presigned_requests) {
      const file = files.find((candidate) => candidate.path === presigned.path)
      const bytes = slice(file?.bytes ?? Buffer.alloc(0), presigned)
      const response = await put(presigned.url, bytes, file?.type ? { 'content-type': file.type } : {})
      assert.equal(response.status, 200, await response.text())
      assert.equal(response.headers.get('etag'), `"${md5(bytes)}"`)
    }
    assert.equal(emulator.site(site.site_id)?.parts[2]?.md5, md5(game.subarray(100, 200)))

    const complete = await post(emulator, `/cloud/uploads/${site.upload_id}/complete`)
    assert.equal(complete.status, 200)
    assert.deepEqual(complete.body, {})
    assert.equal(emulator.site(site.site_id)?.completed, true)
    assert.deepEqual(await emulator.readUploadedFile(site.site_id, 'build/game.data'), game)
    assert.deepEqual(await emulator.readUploadedFile(site.site_id, 'empty.txt'), Buffer.alloc(0))

    const index = await fetch(emulator.siteUrl(site.site_id))
    assert.equal(index.status, 200)
    assert.equal(index.headers.get('content-type'), 'text/html')
    assert.equal(await index.text(), page.toString())
    const data = await fetch(`${emulator.siteUrl(site.site_id)}build/game.data`)
    assert.equal(data.headers.get('content-type'), 'application/octet-stream')
    assert.deepEqual(Buffer.from(await data.arrayBuffer()), game)
    const head = await fetch(`${emulator.siteUrl(site.site_id)}build/game.data`, { method: 'HEAD' })
    assert.equal(head.status, 200)
    assert.equal(head.headers.get('content-length'), '250')
    assert.equal((await fetch(`${emulator.siteUrl(site.site_id)}missing.js`)).status, 404)

    // Completing again answers {} again; PUTs to a completed upload are refused.
    assert.deepEqual((await post(emulator, `/cloud/uploads/${site.upload_id}/complete`)).body, {})
    const [first] = site.presigned_requests
    assert.equal((await put(first?.url ?? '', page, { 'content-type': 'text/html' })).status, 403)
  })

  test('a second PUT of a part replaces the first', async () => {
    const bytes = Buffer.from('retried body')
    const site = await createSite(emulator, [{ path: 'retry.txt', content_length: bytes.length }])
    const url = site.presigned_requests[0]?.url ?? ''
    assert.equal((await put(url, Buffer.from('wrong bytes!'))).status, 200)
    assert.equal((await put(url, bytes)).status, 200)
    assert.equal((await post(emulator, `/cloud/uploads/${site.upload_id}/complete`)).status, 200)
    assert.deepEqual(await emulator.readUploadedFile(site.site_id, 'retry.txt'), bytes)
  })

  test('an incomplete site is not served and cannot be read', async () => {
    const site = await createSite(emulator, [{ path: 'index.html', content_length: 4 }])
    const response = await fetch(emulator.siteUrl(site.site_id))
    assert.equal(response.status, 404)
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/)
    await assert.rejects(emulator.readUploadedFile(site.site_id, 'index.html'))
  })

  test('complete with a part missing is the 500 ERROR of the real service, naming the part', async () => {
    const site = await createSite(emulator, [
      { path: 'a.bin', content_length: 150 },
      { path: 'b.txt', content_length: 3 },
    ])
    const [firstPart] = site.presigned_requests
    assert.equal((await put(firstPart?.url ?? '', Buffer.alloc(100))).status, 200)
    const answer = await post(emulator, `/cloud/uploads/${site.upload_id}/complete`)
    assert.equal(answer.status, 500)
    assert.equal(answer.body.code, 'ERROR')
    assert.equal(answer.body.message, 'An internal error has occurred.')
    assert.deepEqual(answer.body.metadata, {
      missing_parts: [
        { path: 'a.bin', part_index: 1 },
        { path: 'b.txt', part_index: 0 },
      ],
    })
    assert.equal(emulator.site(site.site_id)?.completed, false)
  })

  test('complete of an unknown upload is a 500 ERROR, of another game is API_FORBIDDEN', async () => {
    const unknown = await post(emulator, `/cloud/uploads/${UNKNOWN_ID}/complete`)
    assert.equal(unknown.status, 500)
    assert.equal(unknown.body.code, 'ERROR')
    const site = await createSite(emulator, [])
    const forbidden = await post(
      emulator,
      `/cloud/uploads/${site.upload_id}/complete`,
      undefined,
      'gamehost-other-token',
    )
    assert.equal(forbidden.status, 403)
    assert.equal(forbidden.body.code, 'API_FORBIDDEN')
  })

  describe('store refusals', () => {
    const bytes = Buffer.from('0123456789')
    let typed: PresignedRequest
    let untyped: PresignedRequest
    let uploadId: string

    before(async () => {
      const site = await createSite(emulator, [
        { path: 'typed.js', content_length: bytes.length, content_type: 'text/javascript' },
        { path: 'untyped.bin', content_length: bytes.length },
      ])
      ;[typed, untyped] = site.presigned_requests as [PresignedRequest, PresignedRequest]
      uploadId = site.upload_id
    })

    async function assertRefused(response: Response, code: string, message?: RegExp) {
      assert.equal(response.status, 403)
      const xml = await response.text()
      assert.ok(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?><Error>'), xml)
      assert.match(xml, new RegExp(`<Code>${code}</Code>`))
      assert.match(xml, new RegExp(`<RequestId>${response.headers.get('x-amz-request-id')}</RequestId>`))
      if (message) assert.match(xml, message)
    }

    test('a tampered URL does not match its signature', async () => {
      const url = new URL(typed.url)
      url.searchParams.set('X-Amz-Expires', '7200')
      await assertRefused(
        await put(url.href, bytes, { 'content-type': 'text/javascript' }),
        'SignatureDoesNotMatch',
      )
      const otherPath = new URL(typed.url)
      otherPath.pathname = otherPath.pathname.replace('typed.js', 'untyped.bin')
      await assertRefused(
        await put(otherPath.href, bytes, { 'content-type': 'text/javascript' }),
        'SignatureDoesNotMatch',
      )
      const signature = url.searchParams.get('X-Amz-Signature') ?? ''
      const forged = new URL(typed.url)
      forged.searchParams.set(
        'X-Amz-Signature',
        `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`,
      )
      await assertRefused(
        await put(forged.href, bytes, { 'content-type': 'text/javascript' }),
        'SignatureDoesNotMatch',
      )
    })

    test('a Content-Length other than the signed one is refused', async () => {
      await assertRefused(await put(untyped.url, bytes.subarray(1)), 'SignatureDoesNotMatch')
    })

    test('a Content-Type other than the declared one is refused; undeclared accepts any', async () => {
      await assertRefused(
        await put(typed.url, bytes, { 'content-type': 'text/plain' }),
        'SignatureDoesNotMatch',
      )
      await assertRefused(await put(typed.url, bytes), 'SignatureDoesNotMatch')
      assert.equal((await put(typed.url, bytes, { 'content-type': 'text/javascript' })).status, 200)
      assert.equal((await put(untyped.url, bytes, { 'content-type': 'image/png' })).status, 200)
    })

    test('the store takes only PUT, and only on its own origin', async () => {
      const get = await fetch(untyped.url)
      assert.equal(get.status, 405)
      assert.match(await get.text(), /<Code>MethodNotAllowed<\/Code>/)
      const onApi = new URL(untyped.url)
      const api = new URL(emulator.url)
      onApi.host = api.host
      const misdirected = await put(onApi.href, bytes)
      assert.equal(misdirected.status, 404)
      assert.equal(((await misdirected.json()) as { code: string }).code, 'API_NOT_FOUND')
    })

    test('a chunked PUT, without Content-Length, is refused', async () => {
      const answer = await chunkedPut(untyped.url, [bytes.subarray(0, 4), bytes.subarray(4)])
      assert.equal(answer.status, 403)
      assert.match(answer.body, /<Code>SignatureDoesNotMatch<\/Code>/)
    })

    test('a PUT cut off before its length stores nothing', async () => {
      const site = await createSite(emulator, [{ path: 'cut.bin', content_length: 10 }])
      const before = emulator.requests.length
      await cutOffPut(site.presigned_requests[0]?.url ?? '', bytes.subarray(0, 4), 10)
      const requests = await recordedRequests(emulator, before + 1)
      assert.deepEqual(requests.at(-1), {
        method: 'PUT',
        path: `/gamehost-cdn/${site.upload_id}/cut.bin`,
        status: 499,
      })
      assert.equal(emulator.site(site.site_id)?.parts[0]?.uploaded, false)
    })

    test('URLs expire after 1 hour for a single request, after 6 hours for a part', async () => {
      const site = await createSite(emulator, [
        { path: 'small.txt', content_length: 10 },
        { path: 'large.bin', content_length: 100 },
      ])
      const [small, large] = site.presigned_requests as [PresignedRequest, PresignedRequest]
      const start = clock
      try {
        clock = start + HOUR_MS - 1
        assert.equal((await put(small.url, bytes)).status, 200)
        clock = start + HOUR_MS
        await assertRefused(await put(small.url, bytes), 'AccessDenied', /Request has expired/)
        clock = start + 6 * HOUR_MS - 1
        assert.equal((await put(large.url, Buffer.alloc(100))).status, 200)
        clock = start + 6 * HOUR_MS
        await assertRefused(await put(large.url, Buffer.alloc(100)), 'AccessDenied', /Request has expired/)
      } finally {
        clock = start
      }
    })

    test('store requests are recorded without their query string', () => {
      assert.ok(
        emulator.requests.some(
          (entry) => entry.path === `/gamehost-cdn/${uploadId}/typed.js` && entry.status === 403,
        ),
      )
    })
  })
})
