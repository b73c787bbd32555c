// PresignedRequestList keeps each URL as what it does not share with the first: every URL must come
// back byte for byte, whatever its shape, and a site's S3 presigned URLs must take far fewer bytes.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { PresignedRequestList } from '../../src/api/presigned.ts'
import { PartSigner } from '../../src/emulator/presign.ts'

const request = (url: string, i = 0) => ({ path: `f${i}.txt`, url, byte_offset: 0, content_length: i })

describe('PresignedRequestList', () => {
  test('gives back every URL as it was pushed, whatever it shares with the first', () => {
    const first =
      'https://store.example/bucket/up/a.js?x-id=PutObject&X-Amz-Date=20261123T000000Z&X-Amz-Signature=abc'
    const urls = [
      first,
      first,
      'https://store.example/bucket/up/b.js?x-id=PutObject&X-Amz-Date=20261123T000000Z&X-Amz-Signature=def',
      // the same parameters in another order, one missing, one added
      'https://store.example/bucket/up/c.js?X-Amz-Signature=abc&x-id=PutObject&partNumber=2',
      // no query; an empty parameter; a lone `?`; `&` before any `?`
      'https://store.example/bucket/up/d.js',
      'https://store.example/bucket/up/e.js?&&x-id=PutObject&',
      'https://store.example/bucket/up/f.js?',
      'https://store.example/bucket/up&g.js?x-id=PutObject',
      // beyond ASCII, and percent-encoded
      'https://store.example/bucket/up/gr\u00fc\u00dfe/\u{1f6d1}.js?x-id=PutObject&n=%E2%88%9E',
      // another origin altogether; nothing; a piece longer than a varint's first byte can count
      'http://127.0.0.1:9/x?y',
      '',
      `https://store.example/bucket/up/${'long/'.repeat(400)}z.js?x-id=PutObject&X-Amz-Signature=${'f'.repeat(300)}`,
    ]
    const list = PresignedRequestList.of(urls.map(request))
    assert.equal(list.length, urls.length)
    // Pieces of one byte, against a first URL of many pieces: the longest encoding there is.
    const many = PresignedRequestList.of([
      request(`x?${'&a'.repeat(5000)}&`),
      request('&'.repeat(9000) + '?'),
    ])
    assert.equal(many.url(1), '&'.repeat(9000) + '?')
    urls.forEach((url, i) => {
      assert.equal(list.url(i), url, `url ${i}`)
      assert.equal(list.path(i), `f${i}.txt`)
      assert.equal(list.contentLength(i), i)
    })
    assert.deepEqual(
      [...list].map((r) => r.url),
      urls,
    )
  })

  test("keeps a site's S3 presigned URLs in under a third of their bytes", async () => {
    const signer = new PartSigner()
    const urls: string[] = []
    for (let i = 0; i < 300; i++) {
      urls.push(
        await signer.url('http://127.0.0.1:4566', {
          uploadId: '0b6f9c1e-2f3a-4c5d-8e7f-9a0b1c2d3e4f',
          partIndex: 0,
          multipart: false,
          path: `assets/${i % 7}/chunk-${i}.${i % 2 ? 'js' : 'css'}`,
          contentLength: 1000 + i,
          contentType: i % 2 ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
          signedAt: Date.UTC(2026, 10, 23, 12, 0, i % 3),
          expiresIn: 3600,
        }),
      )
    }
    const list = PresignedRequestList.of(urls.map(request))
    urls.forEach((url, i) => assert.equal(list.url(i), url))
    const raw = urls.reduce((sum, url, i) => sum + Buffer.byteLength(url) + `f${i}.txt`.length, 0)
    assert.ok(list.bytesUsed * 3 < raw, `${list.bytesUsed} bytes kept for ${raw}`)
  })
})
