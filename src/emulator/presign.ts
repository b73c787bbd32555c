// Presigned part URLs: everything a PUT must match is in the query string, signed with HMAC-SHA256
// under a secret that lives as long as the emulator, so a tampered URL fails like it does on S3.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

export const STORE_PREFIX = '/_store/'

export interface PartClaims {
  uploadId: string
  partIndex: number
  path: string
  byteOffset: number
  contentLength: number
  /** The file's declared content type; undefined when none was declared (then any is accepted). */
  contentType: string | undefined
  /** Milliseconds since the epoch. */
  expiresAt: number
}

export type VerifyResult = { claims: PartClaims } | { refused: 'bad-signature' | 'expired' }

const DIGITS = /^\d+$/

export class PartSigner {
  private readonly secret: Buffer

  constructor(secret: Buffer = randomBytes(32)) {
    this.secret = secret
  }

  /** The absolute URL of the part; baseUrl has no trailing slash. */
  url(baseUrl: string, claims: PartClaims): string {
    const query = new URLSearchParams({
      path: claims.path,
      part: String(claims.partIndex),
      offset: String(claims.byteOffset),
      length: String(claims.contentLength),
    })
    if (claims.contentType !== undefined) query.set('content-type', claims.contentType)
    query.set('expires', String(claims.expiresAt))
    query.set('signature', this.sign(claims))
    return `${baseUrl}${STORE_PREFIX}${encodeURIComponent(claims.uploadId)}?${query.toString()}`
  }

  /** Checks a store request's path (after STORE_PREFIX) and query against its signature, then its expiry. */
  verify(uploadIdSegment: string, query: URLSearchParams, now: number): VerifyResult {
    const claims = parseClaims(uploadIdSegment, query)
    if (!claims) return { refused: 'bad-signature' }
    const signature = Buffer.from(query.get('signature') ?? '', 'hex')
    const expected = Buffer.from(this.sign(claims), 'hex')
    if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) {
      return { refused: 'bad-signature' }
    }
    return now >= claims.expiresAt ? { refused: 'expired' } : { claims }
  }

  private sign(claims: PartClaims): string {
    const canonical = JSON.stringify([
      claims.uploadId,
      claims.partIndex,
      claims.path,
      claims.byteOffset,
      claims.contentLength,
      claims.contentType ?? null,
      claims.expiresAt,
    ])
    return createHmac('sha256', this.secret).update(canonical).digest('hex')
  }
}

function parseClaims(uploadIdSegment: string, query: URLSearchParams): PartClaims | undefined {
  const numbers = ['part', 'offset', 'length', 'expires'].map((name) => query.get(name) ?? '')
  const path = query.get('path')
  if (path === null || !numbers.every((value) => DIGITS.test(value))) return undefined
  const [partIndex, byteOffset, contentLength, expiresAt] = numbers.map(Number) as [
    number,
    number,
    number,
    number,
  ]
  let uploadId: string
  try {
    uploadId = decodeURIComponent(uploadIdSegment)
  } catch {
    return undefined
  }
  return {
    uploadId,
    partIndex,
    path,
    byteOffset,
    contentLength,
    contentType: query.get('content-type') ?? undefined,
    expiresAt,
  }
}
