const AMZ_DATE = /(?:^|&)X-Amz-Date=([^&#]*)/
const AMZ_EXPIRES = /(?:^|&)X-Amz-Expires=([^&#]*)/
const EXPIRES_MS = /(?:^|&)expires=([^&#]*)/

/**
 * When a presigned URL stops working, in ms since the epoch, read from its query: AWS Signature V4
 * (`X-Amz-Date` as YYYYMMDDTHHMMSSZ plus `X-Amz-Expires` seconds, the real object store's form), or
 * an `expires` parameter in ms since the epoch (the emulator's older form). Undefined when neither
 * is there or they do not parse.
 */
export function urlExpiry(url: string): number | undefined {
  const q = url.indexOf('?')
  if (q < 0) return undefined
  const query = url.slice(q + 1)
  const date = AMZ_DATE.exec(query)?.[1]
  const expires = AMZ_EXPIRES.exec(query)?.[1]
  if (date !== undefined && expires !== undefined) {
    const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(date)
    if (m && /^\d+$/.test(expires)) {
      const signed = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!)
      return signed + Number(expires) * 1000
    }
  }
  const ms = EXPIRES_MS.exec(query)?.[1]
  if (ms !== undefined && /^\d+$/.test(ms)) return Number(ms)
  return undefined
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
