// Presigned PUT URLs in the object store's real form: AWS Signature V4 in the query string, signed
// over content-length, content-type (when the file declared one) and host by @smithy/signature-v4,
// under credentials that live as long as the emulator, so a tampered URL fails like it does on S3.

import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { SignatureV4 } from '@smithy/signature-v4'
import type { Checksum, HttpRequest, SourceData } from '@smithy/types'

/** The bucket every CDN upload goes to; the object key is `<upload_id>/<path>`. */
const STORE_BUCKET = 'gamehost-cdn'

export interface PartClaims {
  uploadId: string
  /** Position of the part in its file, from 0; only sent (as partNumber) when the file has parts. */
  partIndex: number
  multipart: boolean
  path: string
  contentLength: number
  /** The content type to sign: the declared one of a whole file; undefined (not signed) for a part or a file that declared none. */
  contentType: string | undefined
  /** Milliseconds since the epoch when the URL is signed. */
  signedAt: number
  /** Seconds the URL is valid (X-Amz-Expires). */
  expiresIn: number
}

/** What the store learns from a PUT's path and query once its signature holds. */
export interface StoreTarget {
  uploadId: string
  path: string
  partIndex: number
}

export type VerifyResult = { target: StoreTarget } | { refused: 'bad-signature' | 'expired' }

const REGION = 'us-east-1'
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD'
const SHA256_HEADER = 'x-amz-content-sha256'
const PAYLOAD_HEADERS = new Set([SHA256_HEADER])

/** Node's crypto as the Checksum the signer asks for (an HMAC when given a secret). */
class Sha256 implements Checksum {
  readonly #secret: Buffer | string | undefined
  #hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>

  constructor(secret?: SourceData) {
    this.#secret =
      secret === undefined || typeof secret === 'string'
        ? secret
        : ArrayBuffer.isView(secret)
          ? Buffer.from(secret.buffer, secret.byteOffset, secret.byteLength)
          : Buffer.from(secret)
    this.#hash = this.#fresh()
  }

  #fresh(): ReturnType<typeof createHash> | ReturnType<typeof createHmac> {
    return this.#secret === undefined ? createHash('sha256') : createHmac('sha256', this.#secret)
  }

  update(data: Uint8Array): void {
    this.#hash.update(data)
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.#hash.digest())
  }

  reset(): void {
    this.#hash = this.#fresh()
  }
}

export class PartSigner {
  private readonly signer: SignatureV4

  constructor() {
    const credentials = {
      accessKeyId: `AKIA${randomBytes(8).toString('hex').toUpperCase()}`,
      secretAccessKey: randomBytes(30).toString('base64'),
      // A store reached through temporary credentials sends their token too, as real ones do.
      sessionToken: randomBytes(128).toString('base64'),
    }
    // S3 signs the path as sent (escaped once), not escaped a second time as other services do.
    this.signer = new SignatureV4({
      credentials,
      region: REGION,
      service: 's3',
      sha256: Sha256,
      uriEscapePath: false,
    })
  }

  /** The absolute URL of the part on the store at `storeUrl` (no trailing slash). */
  async url(storeUrl: string, claims: PartClaims): Promise<string> {
    const base = new URL(storeUrl)
    const query: Record<string, string> = { 'x-id': claims.multipart ? 'UploadPart' : 'PutObject' }
    if (claims.multipart) {
      query.partNumber = String(claims.partIndex + 1)
      query.uploadId = claims.uploadId
    }
    const headers: Record<string, string> = {
      host: base.host,
      'content-length': String(claims.contentLength),
      [SHA256_HEADER]: UNSIGNED_PAYLOAD,
    }
    if (claims.contentType !== undefined) headers['content-type'] = claims.contentType
    const signed = await this.signer.presign(
      request(base, objectPath(claims.uploadId, claims.path), query, headers),
      {
        expiresIn: claims.expiresIn,
        signingDate: new Date(claims.signedAt),
        unhoistableHeaders: PAYLOAD_HEADERS,
        unsignableHeaders: PAYLOAD_HEADERS,
      },
    )
    const search = new URLSearchParams(signed.query as Record<string, string>)
    return `${base.origin}${signed.path}?${search.toString().replace(/\+/g, '%20')}`
  }

  /**
   * Checks a store PUT (its raw path, query and headers) against its signature, then its expiry, the
   * way S3 does: every signed header must hold the value it was signed with.
   */
  async verify(
    rawPath: string,
    query: URLSearchParams,
    headers: Record<string, string | string[] | undefined>,
    now: number,
  ): Promise<VerifyResult> {
    const target = parseTarget(rawPath, query)
    const signedHeaders = query.get('X-Amz-SignedHeaders')?.split(';') ?? []
    const amzDate = parseAmzDate(query.get('X-Amz-Date') ?? '')
    const expiresIn = Number(query.get('X-Amz-Expires'))
    const given = query.get('X-Amz-Signature') ?? ''
    if (!target || amzDate === undefined || !Number.isSafeInteger(expiresIn) || expiresIn < 1) {
      return { refused: 'bad-signature' }
    }
    const requestHeaders: Record<string, string> = { [SHA256_HEADER]: UNSIGNED_PAYLOAD }
    for (const name of signedHeaders) {
      const value = headers[name]
      if (value === undefined) return { refused: 'bad-signature' }
      requestHeaders[name] = Array.isArray(value) ? value.join(',') : value
    }
    const unsignedQuery: Record<string, string> = {}
    for (const [name, value] of query) {
      if (!name.startsWith('X-Amz-')) unsignedQuery[name] = value
    }
    const host = requestHeaders.host ?? ''
    let signed: HttpRequest
    try {
      signed = await this.signer.presign(
        request(new URL(`http://${host}`), rawPath, unsignedQuery, requestHeaders),
        {
          expiresIn,
          signingDate: new Date(amzDate),
          unhoistableHeaders: PAYLOAD_HEADERS,
          unsignableHeaders: PAYLOAD_HEADERS,
        },
      )
    } catch {
      return { refused: 'bad-signature' }
    }
    const answer = signed.query ?? {}
    const expected = Buffer.from(String(answer['X-Amz-Signature']))
    const actual = Buffer.from(given)
    const sameHeaders = answer['X-Amz-SignedHeaders'] === query.get('X-Amz-SignedHeaders')
    const sameCredential = answer['X-Amz-Credential'] === query.get('X-Amz-Credential')
    if (
      !sameHeaders ||
      !sameCredential ||
      expected.length !== actual.length ||
      !timingSafeEqual(expected, actual)
    ) {
      return { refused: 'bad-signature' }
    }
    return now >= amzDate + expiresIn * 1000 ? { refused: 'expired' } : { target }
  }
}

function request(
  base: URL,
  path: string,
  query: Record<string, string>,
  headers: Record<string, string>,
): HttpRequest {
  return {
    method: 'PUT',
    protocol: base.protocol,
    hostname: base.hostname,
    ...(base.port ? { port: Number(base.port) } : {}),
    path,
    query,
    headers,
  }
}

/** `/<bucket>/<upload_id>/<path>`, every segment of the key escaped as S3 escapes it. */
function objectPath(uploadId: string, path: string): string {
  const key = [uploadId, ...path.split('/')].map(s3Escape).join('/')
  return `/${STORE_BUCKET}/${key}`
}

function s3Escape(segment: string): string {
  return encodeURIComponent(segment).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  )
}

function parseTarget(rawPath: string, query: URLSearchParams): StoreTarget | undefined {
  const prefix = `/${STORE_BUCKET}/`
  if (!rawPath.startsWith(prefix)) return undefined
  let segments: string[]
  try {
    segments = rawPath.slice(prefix.length).split('/').map(decodeURIComponent)
  } catch {
    return undefined
  }
  const [uploadId, ...rest] = segments
  if (!uploadId || rest.length === 0) return undefined
  const partNumber = query.get('partNumber')
  const partIndex = partNumber === null ? 0 : Number(partNumber) - 1
  if (!Number.isSafeInteger(partIndex) || partIndex < 0) return undefined
  return { uploadId, path: rest.join('/'), partIndex }
}

/** `20261122T133000Z` in ms since the epoch. */
function parseAmzDate(value: string): number | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value)
  if (!match) return undefined
  const [y = 0, mo = 1, d = 0, h = 0, mi = 0, s = 0] = match.slice(1).map(Number)
  return Date.UTC(y, mo - 1, d, h, mi, s)
}
