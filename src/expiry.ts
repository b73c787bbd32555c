/**
 * When a presigned URL stops working, in ms since the epoch, read from its query: AWS Signature V4
 * (`X-Amz-Date` as YYYYMMDDTHHMMSSZ plus `X-Amz-Expires` seconds, the real object store's form), or
 * an `expires` parameter in ms since the epoch (the emulator's older form). Undefined when neither
 * is there or they do not parse.
 */
export function urlExpiry(url: string): number | undefined {
  let query: URLSearchParams
  try {
    query = new URL(url).searchParams
  } catch {
    return undefined
  }
  const date = query.get('X-Amz-Date')
  const expires = query.get('X-Amz-Expires')
  if (date !== null && expires !== null) {
    const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(date)
    if (m && /^\d+$/.test(expires)) {
      const signed = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!)
      return signed + Number(expires) * 1000
    }
  }
  const ms = query.get('expires')
  if (ms !== null && /^\d+$/.test(ms)) return Number(ms)
  return undefined
}

/**
 * The order to upload in: the URL that expires soonest first (a 1-hour URL before a 6-hour part
 * URL), URLs of unknown expiry last; among equal expiries, the largest first, so that a big file
 * does not start last and upload alone at the end. Sorts a copy.
 */
export function soonestExpiringFirst<T>(
  items: readonly T[],
  url: (item: T) => string,
  size: (item: T) => number,
): T[] {
  const keyed = items.map((item) => ({ item, expiry: urlExpiry(url(item)) ?? Infinity, size: size(item) }))
  keyed.sort((a, b) => a.expiry - b.expiry || b.size - a.size)
  return keyed.map((k) => k.item)
}
