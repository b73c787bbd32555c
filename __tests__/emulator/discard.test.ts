// discardBytes: the store counts each PUT's bytes and keeps none (the benchmark's store that costs
// nothing per file), and still completes a site only when every part arrived whole.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { request } from 'node:http'
import { test } from 'node:test'
import type { CreateCdnSiteResponse } from '../../src/api/types.ts'
import { startEmulator, type Emulator } from '../../src/emulator/index.ts'

const TOKEN = 'gamehost-demo-token'
const SITES = '/cloud/games/4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86/cdn/sites'

async function post(emulator: Emulator, path: string, body?: unknown) {
  const response = await fetch(`${emulator.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: response.status, body: await response.json() }
}

/** A PUT that announces `length` bytes and sends `bytes`, then ends its side of the connection. */
function shortPut(url: string, bytes: Buffer, length: number): Promise<string> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'PUT', headers: { 'content-length': length } }, (res) =>
      resolve(`answered ${res.statusCode}`),
    )
    req.on('error', (error) => resolve(`cut: ${(error as NodeJS.ErrnoException).code}`))
    req.write(bytes, () => req.socket?.end())
  })
}

test('discardBytes: parts counted and dropped, the site completed once all arrived, nothing to read back', async () => {
  const emulator = await startEmulator({
    rateLimit: false,
    multipartThreshold: 64,
    partSize: 100,
    discardBytes: true,
  })
  try {
    const game = randomBytes(250)
    const created = await post(emulator, SITES, {
      display_name: 'Web Client',
      files: [
        { path: 'build/game.data', content_length: game.length },
        { path: 'empty.txt', content_length: 0, content_type: 'text/plain' },
      ],
    })
    assert.equal(created.status, 200)
    const site = created.body as CreateCdnSiteResponse
    const [first, ...rest] = site.presigned_requests
    // A part cut short is not stored: the site cannot complete without it.
    assert.match(await shortPut(first!.url, game.subarray(0, 10), first!.content_length), /^cut|answered 400/)
    assert.equal(emulator.site(site.site_id)?.parts[0]?.uploaded, false)
    for (const presigned of [first!, ...rest]) {
      const bytes = game.subarray(presigned.byte_offset, presigned.byte_offset + presigned.content_length)
      const headers: Record<string, string> =
        presigned.path === 'empty.txt' ? { 'content-type': 'text/plain' } : {}
      const response = await fetch(presigned.url, { method: 'PUT', body: bytes, headers })
      assert.equal(response.status, 200, await response.text())
      // No MD5 computed: an ETag the client does not take for one.
      assert.equal(response.headers.get('etag'), '"discarded"')
    }
    const complete = await post(emulator, `/cloud/uploads/${site.upload_id}/complete`)
    assert.equal(complete.status, 200, JSON.stringify(complete.body))
    assert.equal(emulator.site(site.site_id)?.completed, true)
    await assert.rejects(emulator.readUploadedFile(site.site_id, 'build/game.data'), /discards the bytes/)
  } finally {
    await emulator.close()
  }
})
