// PresignedRequestList keeps each request's fields: every path and URL must come back byte for byte.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { PresignedRequestList } from '../../src/api/presigned.ts'

const request = (url: string, i = 0) => ({ path: `f${i}.txt`, url, byte_offset: 0, content_length: i })

describe('PresignedRequestList', () => {
  test('gives back every URL as it was pushed, whatever its shape', () => {
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
      // another origin altogether; nothing; a long one
      'http://127.0.0.1:9/x?y',
      '',
      `https://store.example/bucket/up/${'long/'.repeat(400)}z.js?x-id=PutObject&X-Amz-Signature=${'f'.repeat(300)}`,
    ]
    const list = PresignedRequestList.of(urls.map(request))
    assert.equal(list.length, urls.length)
    // Requests over several of the list's buffers, and one larger than a buffer.
    const large = `https://store.example/${'x'.repeat(1536 * 1024)}`
    const many = Array.from({ length: 3000 }, (_, i) => request(`${first}&n=${i}`, i))
    many.splice(1000, 0, request(large, 1000))
    const spread = PresignedRequestList.of(many)
    assert.equal(spread.length, many.length)
    many.forEach((r, i) => assert.equal(spread.url(i), r.url, `url ${i}`))
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
})
