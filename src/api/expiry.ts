/**
 * When a presigned URL stops working, in ms since the epoch, read from its query: AWS Signature V4
 * (`X-Amz-Date` as YYYYMMDDTHHMMSSZ plus `X-Amz-Expires` seconds, the real object store's form), or
 * an `expires` parameter in ms since the epoch (the emulator's older form). Undefined when neither
 * is there or they do not parse.
 */
export function urlExpiry(url: string): number | undefined {
  const q = url.indexOf('?')
  if (q < 0) return undefined
  const query = new URLSearchParams(url.slice(q + 1).split('#')[0])
  const signed = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(query.get('X-Amz-Date') ?? '')
  const seconds = query.get('X-Amz-Expires') ?? ''
  if (signed && /^\d+$/.test(seconds)) {
    const [, year, month, day, hours, minutes, secs] = signed.map(Number)
    return Date.UTC(year!, month! - 1, day, hours, minutes, secs) + Number(seconds) * 1000
  }
  const ms = query.get('expires') ?? ''
  return /^\d+$/.test(ms) ? Number(ms) : undefined
}

/**
 * The order to upload items 0..count-1 in, as their indices, from each one's URL expiry (urlExpiry's
 * answer): the URL that expires soonest first (a 1-hour URL before a 6-hour part URL), URLs of
 * unknown expiry last; among equal expiries, the largest first, so that a big file does not start
 * last and upload alone at the end.
 */
export function soonestExpiringOrder(
  count: number,
  expiry: (index: number) => number | undefined,
  size: (index: number) => number,
): number[] {
  const expires = Array.from({ length: count }, (_, i) => expiry(i) ?? Infinity)
  // Two unknown expiries (Infinity - Infinity is NaN) compare by size as equal ones do.
  return [...expires.keys()].sort((a, b) => expires[a]! - expires[b]! || size(b) - size(a))
}
