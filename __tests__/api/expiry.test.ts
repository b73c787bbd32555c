import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { soonestExpiringOrder, urlExpiry } from '../../src/api/expiry.ts'

const sigv4 = (date: string, seconds: number, key: string) =>
  `https://store.example.com/bucket/${key}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20261122%2Fauto%2Fs3%2Faws4_request` +
  `&X-Amz-Date=${date}&X-Amz-Expires=${seconds}&X-Amz-SignedHeaders=content-length%3Bhost&X-Amz-Signature=abc`

describe('urlExpiry', () => {
  it('reads AWS SigV4 X-Amz-Date plus X-Amz-Expires', () => {
    assert.equal(urlExpiry(sigv4('20261122T133000Z', 3600, 'a')), Date.UTC(2026, 10, 22, 14, 30, 0))
  })
  it("reads the emulator's expires parameter in ms", () => {
    assert.equal(
      urlExpiry('http://127.0.0.1:1/_store/u?path=a&expires=1790000000000&signature=x'),
      1790000000000,
    )
  })
  it('is undefined for a URL without expiry, a malformed date, or no URL at all', () => {
    assert.equal(urlExpiry('https://store.example.com/a?sig=1'), undefined)
    assert.equal(urlExpiry(sigv4('2026-11-22T13:30:00Z', 3600, 'a')), undefined)
    assert.equal(urlExpiry('not a url'), undefined)
  })
})

/** The items in soonestExpiringOrder's order. */
function ordered<T extends { url: string; size: number }>(items: T[]): T[] {
  return Array.from(
    soonestExpiringOrder(
      items.length,
      (i) => urlExpiry(items[i]!.url),
      (i) => items[i]!.size,
    ),
    (i) => items[i]!,
  )
}

describe('soonestExpiringOrder', () => {
  it('puts the soonest-expiring URLs first, 1-hour before 6-hour part URLs, unknown expiry last', () => {
    const items = [
      { url: 'https://store.example.com/unknown?sig=1', size: 900 },
      { url: sigv4('20261122T130000Z', 21600, 'part-1'), size: 100 },
      { url: sigv4('20261122T130000Z', 3600, 'small'), size: 10 },
      { url: sigv4('20261122T125900Z', 3600, 'earlier'), size: 5 },
      { url: 'http://127.0.0.1:1/_store/u?expires=1795900000000', size: 1 },
    ]
    assert.deepEqual(
      ordered(items).map((i) => new URL(i.url).pathname),
      ['/bucket/earlier', '/bucket/small', '/bucket/part-1', '/_store/u', '/unknown'],
    )
  })
  it('among equal expiries, the largest first', () => {
    const items = [10, 300, 20].map((size) => ({ url: sigv4('20261122T130000Z', 3600, `f${size}`), size }))
    assert.deepEqual(
      ordered(items).map((i) => i.size),
      [300, 20, 10],
    )
  })
})
