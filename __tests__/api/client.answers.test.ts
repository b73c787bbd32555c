// Answers that are not what they should be, from a server of our own: a missing or wrong field, an
// answer far too large, a connection cut or silent. Each fails naming the operation (and the field or
// the host), not as an empty output, a TypeError or undici's "Headers Timeout Error".
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { ServiceClient, type ClientOptions } from '../../src/api/client.ts'
import { createAgent } from '../../src/api/http.ts'
import { NetworkError, ServiceError, UnexpectedAnswerError } from '../../src/api/errors.ts'
import { retryPolicy } from '../../src/common/retry.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { explainServiceFailure } from '../../src/inputs/service-hints.ts'

const GAME = 'game'
const SITE = '3f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b'
const UPLOAD = '9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b'
type Handler = (request: IncomingMessage, response: ServerResponse) => void

describe('answers that are not what they should be', () => {
  let handler: Handler = (_request, response) => response.end()
  const server = createServer((request, response) => handler(request, response))
  const agent = createAgent()
  let url = ''
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  after(async () => {
    await agent.destroy()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  const json =
    (body: unknown): Handler =>
    (_request, response) => {
      const bytes = Buffer.from(JSON.stringify(body))
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': bytes.length,
        'rvt-ray-id': 'ray-1',
      })
      response.end(bytes)
    }
  const client = (options: Pick<ClientOptions, 'timeouts' | 'maxAnswerBytes'> = {}) =>
    new ServiceClient({
      baseUrl: url,
      token: 't',
      dispatcher: agent,
      logger: memoryLogger(),
      retry: retryPolicy({ retries: 0 }),
      explain: explainServiceFailure,
      ...options,
    })
  const files = [{ path: 'index.html', content_length: 10 }]

  test('{} from a namespace create fails naming the operation and the field', async () => {
    handler = json({})
    await assert.rejects(
      client().createNamespace(GAME, { name_id: 'n', display_name: 'n', version_id: 'v' }),
      (error: Error) => {
        assert.ok(error instanceof UnexpectedAnswerError)
        assert.equal(
          error.message,
          "games.namespaces.createGameNamespace: the service's answer is not what the operation promises: namespace_id is missing (ray id ray-1)",
        )
        return true
      },
    )
    handler = json({ namespace_id: '' })
    await assert.rejects(
      client().createNamespace(GAME, { name_id: 'n', display_name: 'n', version_id: 'v' }),
      /namespace_id is string "", not an id \(a UUID\)/,
    )
  })

  test('an id that is not a UUID fails as an unexpected answer naming the field; either case of hex passes', async () => {
    const create = () => client().createNamespace(GAME, { name_id: 'n', display_name: 'n', version_id: 'v' })
    for (const id of ['ns-1', `${SITE}\n::warning::pwned`, `${SITE} `, '../../x', SITE.replace(/-/g, '')]) {
      handler = json({ namespace_id: id })
      await assert.rejects(create(), (error: Error) => {
        assert.ok(error instanceof UnexpectedAnswerError, String(error))
        assert.match(error.message, /: namespace_id is string ".*, not an id \(a UUID\)/)
        assert.ok(!error.message.includes('\n'), 'the id is quoted as JSON: no line break in the message')
        return true
      })
    }
    handler = json({ namespace_id: SITE.toUpperCase() })
    assert.equal((await create()).namespace_id, SITE.toUpperCase())

    const request = { path: 'index.html', url: 'http://store/x', byte_offset: 0, content_length: 10 }
    handler = json({ site_id: 'a\n::add-mask::x', upload_id: UPLOAD, presigned_requests: [request] })
    await assert.rejects(
      client().createCdnSite(GAME, { display_name: 'x', files }),
      /^UnexpectedAnswerError: games\.cdn\.createGameCdnSite: .*: site_id is string "a\\n::add-mask::x", not an id \(a UUID\)/,
    )
    handler = json({ site_id: SITE, upload_id: 7, presigned_requests: [request] })
    await assert.rejects(
      client().createCdnSite(GAME, { display_name: 'x', files }),
      /: upload_id is number 7, not an id \(a UUID\)/,
    )
  })

  test("a game's name id, which makes the url output's host, holds only a name id's characters", async () => {
    const game = (nameId: unknown, namespaceNameId = 'pr-1') => ({
      game: {
        name_id: nameId,
        namespaces: [{ namespace_id: SITE, name_id: namespaceNameId }],
        versions: [],
      },
    })
    handler = json(game('space-game'))
    assert.equal((await client().getGame(GAME)).game.name_id, 'space-game')
    handler = json(game('x/"$(curl evil)'))
    await assert.rejects(
      client().getGame(GAME),
      /^UnexpectedAnswerError: games\.getGameById: .*: game\.name_id is string .*, not a name id/,
    )
    handler = json(game('space-game', 'pr-1\n::error::x'))
    await assert.rejects(
      client().getGame(GAME),
      /: game\.namespaces\[0\]\.name_id is string .*, not a name id/,
    )
  })

  test('a site answer without presigned_requests, or with a wrong request, fails naming the field', async () => {
    handler = json({ site_id: SITE, upload_id: UPLOAD })
    await assert.rejects(
      client().createCdnSite(GAME, { display_name: 'x', files }),
      /^UnexpectedAnswerError: games\.cdn\.createGameCdnSite: .*: presigned_requests is missing/,
    )
    const request = { path: 'index.html', url: 'http://store/x', byte_offset: 0, content_length: 10 }
    handler = json({
      site_id: SITE,
      upload_id: UPLOAD,
      presigned_requests: [request, { ...request, url: 42 }],
    })
    await assert.rejects(
      client().createCdnSite(GAME, { display_name: 'x', files }),
      /: presigned_requests\[1\]\.url is number 42, not a string/,
    )
    handler = json({ site_id: SITE, upload_id: UPLOAD, presigned_requests: [request], extra: true })
    const site = await client().createCdnSite(GAME, { display_name: 'x', files })
    assert.equal(site.presigned_requests.length, 1, 'fields the operation does not name are allowed')
  })

  test('a site answer is read as it arrives, a byte at a time, and gives back each request as sent', async () => {
    const requests = [
      {
        path: 'index.html',
        url: 'http://store/a?X-Amz-Date=20261123T120000Z&X-Amz-Expires=60',
        byte_offset: 0,
        content_length: 10,
      },
      { path: 'données/é.js', url: 'http://store/d%C3%A9?a=1&b=/c', byte_offset: 0, content_length: 3 },
      { path: 'big.bin', url: 'http://store/big?part=2', byte_offset: 5_000_000_000, content_length: 7 },
    ]
    const text = JSON.stringify({
      presigned_requests: requests,
      site_id: SITE,
      nested: { site_id: 'no' },
      upload_id: UPLOAD,
    })
      // JSON escapes a server may use, which must come back decoded.
      .replace('/c', '\\/c')
      .replace('é.js', '\\u00e9.js')
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])
      for (let i = 0; i < bytes.length; i++) response.write(bytes.subarray(i, i + 1))
      response.end()
    }
    const site = await client().createCdnSite(GAME, { display_name: 'x', files })
    assert.equal(site.site_id, SITE)
    assert.equal(site.upload_id, UPLOAD)
    assert.deepEqual([...site.presigned_requests], requests)
  })

  test('a site answer cut short, or with something else where the object or the list should be, fails clearly', async () => {
    const request = { path: 'index.html', url: 'http://store/x', byte_offset: 0, content_length: 10 }
    const raw =
      (text: string): Handler =>
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(text)
      }
    const create = () => client().createCdnSite(GAME, { display_name: 'x', files })
    handler = raw(
      JSON.stringify({ site_id: SITE, upload_id: UPLOAD, presigned_requests: [request] }).slice(0, -5),
    )
    await assert.rejects(create(), /createGameCdnSite failed: 200 HTTP_200: the answer was not a JSON object/)
    handler = raw(JSON.stringify([{ site_id: SITE, upload_id: UPLOAD, presigned_requests: [request] }]))
    await assert.rejects(create(), /the answer was not a JSON object/)
    handler = raw(JSON.stringify({ site_id: SITE, upload_id: UPLOAD, presigned_requests: [request] }) + ' x')
    await assert.rejects(create(), /the answer was not a JSON object/)
    handler = json({ site_id: SITE, upload_id: UPLOAD, presigned_requests: { 0: request } })
    await assert.rejects(create(), /: presigned_requests is an object, not a list/)
    handler = json({ site_id: SITE, upload_id: UPLOAD, presigned_requests: 'none' })
    await assert.rejects(create(), /: presigned_requests is string "none", not a list/)
    handler = json({ upload_id: UPLOAD, presigned_requests: [request] })
    await assert.rejects(create(), /: site_id is missing/)
    handler = json({ site_id: SITE, upload_id: UPLOAD, presigned_requests: [] })
    assert.equal((await create()).presigned_requests.length, 0)
  })

  test('a site answer larger than the bound is not read further, even without a declared length', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write('{"presigned_requests":[')
      const request = JSON.stringify({
        path: 'a',
        url: `http://store/${'x'.repeat(1000)}`,
        byte_offset: 0,
        content_length: 1,
      })
      for (let i = 0; i < 100; i++) response.write(`${request},`)
    }
    await assert.rejects(
      client({ maxAnswerBytes: 50_000 }).createCdnSite(GAME, { display_name: 'x', files }),
      /^UnexpectedAnswerError: games\.cdn\.createGameCdnSite: the service's answer is larger than 48\.8 KiB/,
    )
  })

  test('an answer that declares 3 GB is refused before it is read', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': 3 * 1024 ** 3 })
      response.write('{"custom_avatars":[')
    }
    await assert.rejects(
      client().listCustomAvatars(GAME),
      /^UnexpectedAnswerError: games\.avatars\.listGameCustomAvatars: the service's answer is larger than 128\.0 MiB/,
    )
  })

  test('an answer of unknown length is read only up to the bound', async () => {
    let written = 0
    handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      const chunk = Buffer.alloc(64 * 1024, 0x20)
      const more = () => {
        while (written < 64 * 1024 * 1024 && response.write(chunk)) written += chunk.length
        if (written < 64 * 1024 * 1024 && !response.destroyed) response.once('drain', more)
      }
      response.on('close', () => (written = -written))
      more()
    }
    await assert.rejects(
      client({ maxAnswerBytes: 1024 * 1024 }).listCustomAvatars(GAME),
      /the service's answer is larger than 1\.0 MiB, more than any answer of it can be; not read further/,
    )
  })

  test('a connection closed mid-answer names the operation and the host', async () => {
    handler = (request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': 100 })
      response.write('{"custom_avatars":')
      setImmediate(() => request.socket.destroy())
    }
    await assert.rejects(client().listCustomAvatars(GAME), (error: Error) => {
      assert.ok(error instanceof NetworkError)
      assert.equal(
        error.message,
        `games.avatars.listGameCustomAvatars failed: the connection was closed before the answer was complete (UND_ERR_SOCKET) (${new URL(url).host})`,
      )
      return true
    })
  })

  test('an api-url that reaches another server (a web page, a 404 of something else) is named in the error', async () => {
    const page =
      (status: number, type: string): Handler =>
      (_request, response) => {
        response.writeHead(status, { 'content-type': type })
        response.end('<!doctype html><title>Example Domain</title>')
      }
    for (const [status, type] of [
      [200, 'text/html; charset=utf-8'],
      [404, 'text/html'],
      [404, 'text/plain'],
      [405, 'application/json'],
    ] as const) {
      handler = page(status, type)
      await assert.rejects(client().listCustomAvatars(GAME), (error: unknown) => {
        assert.ok(error instanceof ServiceError, String(error))
        assert.match(
          error.message,
          /The answer is not the service's \(.+\): api-url reaches another server\. Check api-url/,
        )
        assert.deepEqual(error.inputs, ['api-url'])
        return true
      })
    }
    // A gateway's page for an outage is no fault of api-url.
    handler = page(502, 'text/html')
    await assert.rejects(client().listCustomAvatars(GAME), (error: unknown) => {
      assert.ok(error instanceof ServiceError)
      assert.match(
        error.message,
        /not the service's \(an HTML page\): a proxy or gateway in front of it answered/,
      )
      assert.deepEqual(error.inputs, [])
      return true
    })
  })

  test('no answer within the time-out says so, naming the operation and the host', async () => {
    handler = () => {} // never answers
    await assert.rejects(
      client({ timeouts: { apiStallMs: 50, apiDeadlineMs: 180_000 } }).listCustomAvatars(GAME),
      new RegExp(
        `^NetworkError: games\\.avatars\\.listGameCustomAvatars failed: no answer within 0\\.05 s \\(UND_ERR_HEADERS_TIMEOUT\\) \\(${new URL(url).host}\\)$`,
      ),
    )
  })

  test('a refused connection names the operation and the host', async () => {
    const refused = new ServiceClient({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      dispatcher: agent,
      logger: memoryLogger(),
      retry: retryPolicy({ retries: 0 }),
      explain: explainServiceFailure,
    })
    await assert.rejects(
      refused.listCustomAvatars(GAME),
      /^NetworkError: games\.avatars\.listGameCustomAvatars failed: the connection was refused \(ECONNREFUSED\) \(127\.0\.0\.1:1\): nothing at api-url has answered in this run; check api-url \(its host and port\)$/,
    )
  })
})
