import { urlExpiry } from './expiry.ts'
import type { PresignedRequest } from './types.ts'

/** Bytes per buffer of paths and URLs: a site of 20,000 files fills 3 (13 before the URLs were encoded). */
const CHUNK = 1024 * 1024

/**
 * A site's presigned requests, their paths and URLs kept as UTF-8 bytes in a few large buffers with
 * their offsets in arrays of numbers, rather than as one object and two strings per request.
 *
 * Why: the URLs of 20,000 files are about 13 MB. As strings they live in V8's heap from the site's
 * answer to the last PUT; they survive every young collection of that time, and the bytes that
 * survive are what makes V8 double its young generation, the largest part of the deploy's peak
 * (BENCHMARKS.md, "Where the 20,000-file peak comes from"). In buffers they are outside the heap,
 * and each URL becomes a string only for the PUT that uses it.
 *
 * And each URL is kept as what it does not share with the first one (see UrlCodec): presigned URLs
 * of one site differ in little more than the object's path and the signature, so a URL of about 600
 * bytes is kept in about 130.
 */
export class PresignedRequestList implements Iterable<PresignedRequest> {
  readonly #chunks: Buffer[] = []
  /** Bytes used of the last chunk; as if full before the first, so the first push makes one. */
  #used = CHUNK
  // Per request: its chunk, where its path starts there, its path's and encoded URL's byte lengths.
  readonly #chunk: number[] = []
  readonly #start: number[] = []
  readonly #pathBytes: number[] = []
  readonly #urlBytes: number[] = []
  readonly #byteOffset: number[] = []
  readonly #contentLength: number[] = []
  /** When the URL stops working, ms since the epoch; Infinity when unknown (see urlExpiry). */
  readonly #expiry: number[] = []
  #codec: UrlCodec | undefined

  static of(requests: Iterable<PresignedRequest>): PresignedRequestList {
    const list = new PresignedRequestList()
    for (const request of requests) list.push(request)
    return list
  }

  get length(): number {
    return this.#start.length
  }

  /** Bytes the paths and encoded URLs take in the buffers (what the list holds beyond its numbers). */
  get bytesUsed(): number {
    return this.#chunks.reduce(
      (sum, chunk, i) => sum + (i === this.#chunks.length - 1 ? this.#used : chunk.length),
      0,
    )
  }

  push(request: PresignedRequest): void {
    this.#codec ??= new UrlCodec(request.url)
    const url = this.#codec.encode(request.url)
    const pathBytes = Buffer.byteLength(request.path)
    const bytes = pathBytes + url.length
    if (this.#used + bytes > (this.#chunks.at(-1)?.length ?? 0)) {
      this.#chunks.push(Buffer.allocUnsafe(Math.max(CHUNK, bytes)))
      this.#used = 0
    }
    const chunk = this.#chunks.at(-1)!
    chunk.write(request.path, this.#used)
    url.copy(chunk, this.#used + pathBytes)
    this.#chunk.push(this.#chunks.length - 1)
    this.#start.push(this.#used)
    this.#pathBytes.push(pathBytes)
    this.#urlBytes.push(url.length)
    this.#byteOffset.push(request.byte_offset)
    this.#contentLength.push(request.content_length)
    this.#expiry.push(urlExpiry(request.url) ?? Infinity)
    this.#used += bytes
  }

  path(index: number): string {
    const start = this.#start[index]!
    return this.#chunks[this.#chunk[index]!]!.toString('utf8', start, start + this.#pathBytes[index]!)
  }

  url(index: number): string {
    const start = this.#start[index]! + this.#pathBytes[index]!
    return this.#codec!.decode(
      this.#chunks[this.#chunk[index]!]!.subarray(start, start + this.#urlBytes[index]!),
    )
  }

  byteOffset(index: number): number {
    return this.#byteOffset[index]!
  }

  contentLength(index: number): number {
    return this.#contentLength[index]!
  }

  expiry(index: number): number {
    return this.#expiry[index]!
  }

  /** The request at `index` as an object, as Array.prototype.at gives it (negative counts from the end). */
  at(index: number): PresignedRequest | undefined {
    const i = index < 0 ? this.length + index : index
    if (!(i >= 0 && i < this.length)) return undefined
    return {
      path: this.path(i),
      url: this.url(i),
      byte_offset: this.byteOffset(i),
      content_length: this.contentLength(i),
    }
  }

  *[Symbol.iterator](): Iterator<PresignedRequest> {
    for (let i = 0; i < this.length; i++) yield this.at(i)!
  }
}

const QUESTION = 0x3f
const AMPERSAND = 0x26
// An encoded URL is a run of pieces, each a varint header (LEB128) whose value modulo 4 says what it is:
const COPY = 0 // header / 4 = k: the base's piece k, whole
const LITERAL = 1 // header / 4 = n: the n bytes that follow
const PREFIX = 2 // header / 4 = k, then varints p and n: the first p bytes of the base's piece k, then n bytes
/** A shared start shorter than this is written out (a PREFIX piece costs 3 bytes and more). */
const MIN_PREFIX = 8

/**
 * Keeps a URL as what it does not share with a base URL (the site's first). A URL is cut into pieces
 * before each `?` and `&`: its origin and path, then each query parameter. A piece equal to one of
 * the base's is kept as its number; one that starts as the base's piece in the same place does (the
 * origin and the upload's folder, `&X-Amz-Signature=`) as that length and the rest; any other piece
 * as it is. Decoding joins the pieces again, byte for byte: any URL comes back as it was given.
 */
class UrlCodec {
  readonly #base: Buffer
  /** Where each of the base's pieces starts in it, and its end last. */
  readonly #cuts: number[]
  #scratch = Buffer.allocUnsafe(4096)
  #out = Buffer.allocUnsafe(4096)
  /** Where decode is in the URL it decodes. */
  #at = 0

  constructor(base: string) {
    this.#base = Buffer.from(base)
    this.#cuts = cuts(this.#base)
  }

  encode(url: string): Buffer {
    const length = Buffer.byteLength(url)
    if (this.#scratch.length < length) this.#scratch = Buffer.allocUnsafe(length)
    const bytes = this.#scratch.subarray(0, this.#scratch.write(url))
    // The worst case is 6 bytes a byte: pieces of one byte, each behind a header of up to 5.
    if (this.#out.length < length * 6) this.#out = Buffer.allocUnsafe(length * 6)
    const out = this.#out
    let size = 0
    const base = this.#base
    const baseCuts = this.#cuts
    const pieces = cuts(bytes)
    for (let p = 0; p + 1 < pieces.length; p++) {
      const start = pieces[p]!
      const end = pieces[p + 1]!
      const same = samePiece(base, baseCuts, bytes, start, end, p)
      if (same >= 0) {
        size = writeVarint(out, size, same * 4 + COPY)
        continue
      }
      const shared =
        p + 1 < baseCuts.length ? sharedStart(bytes, start, end, base, baseCuts[p]!, baseCuts[p + 1]!) : 0
      if (shared >= MIN_PREFIX) {
        size = writeVarint(out, size, p * 4 + PREFIX)
        size = writeVarint(out, size, shared)
        size = writeVarint(out, size, end - start - shared)
        size += bytes.copy(out, size, start + shared, end)
      } else {
        size = writeVarint(out, size, (end - start) * 4 + LITERAL)
        size += bytes.copy(out, size, start, end)
      }
    }
    return out.subarray(0, size)
  }

  decode(encoded: Buffer): string {
    let size = 0
    this.#at = 0
    while (this.#at < encoded.length) {
      const header = this.#varint(encoded)
      const kind = header % 4
      const value = Math.floor(header / 4)
      if (kind === COPY) {
        size = this.#append(size, this.#base, this.#cuts[value]!, this.#cuts[value + 1]!)
      } else if (kind === LITERAL) {
        size = this.#append(size, encoded, this.#at, this.#at + value)
        this.#at += value
      } else {
        const from = this.#cuts[value]!
        size = this.#append(size, this.#base, from, from + this.#varint(encoded))
        const rest = this.#varint(encoded)
        size = this.#append(size, encoded, this.#at, this.#at + rest)
        this.#at += rest
      }
    }
    return this.#scratch.toString('utf8', 0, size)
  }

  /** The LEB128 number at #at, which it moves past: read in place, no object per number or per PUT. */
  #varint(encoded: Buffer): number {
    let value = 0
    for (let scale = 1; ; scale *= 0x80) {
      const byte = encoded[this.#at++]!
      value += (byte & 0x7f) * scale
      if (byte < 0x80) return value
    }
  }

  /** Appends source[start, end) to the scratch at `size`; returns the new size. */
  #append(size: number, source: Buffer, start: number, end: number): number {
    if (this.#scratch.length < size + end - start) {
      const larger = Buffer.allocUnsafe(Math.max(this.#scratch.length * 2, size + end - start))
      this.#scratch.copy(larger, 0, 0, size)
      this.#scratch = larger
    }
    return size + source.copy(this.#scratch, size, start, end)
  }
}

/** Where each piece starts (0, then before every `?` and `&`), and the end last. */
function cuts(bytes: Buffer): number[] {
  const at = [0]
  for (let i = 1; i < bytes.length; i++) {
    const byte = bytes[i]
    if (byte === QUESTION || byte === AMPERSAND) at.push(i)
  }
  at.push(bytes.length)
  return at
}

/** The number of the base's piece equal to bytes[start, end), trying the one in the same place first; -1 if none. */
function samePiece(
  base: Buffer,
  baseCuts: number[],
  bytes: Buffer,
  start: number,
  end: number,
  place: number,
): number {
  const pieces = baseCuts.length - 1
  for (let k = 0; k < pieces; k++) {
    const candidate = (place + k) % pieces
    const from = baseCuts[candidate]!
    const to = baseCuts[candidate + 1]!
    if (to - from === end - start && base.compare(bytes, start, end, from, to) === 0) return candidate
  }
  return -1
}

/** How many bytes a[aStart, aEnd) and b[bStart, bEnd) share at their start. */
function sharedStart(
  a: Buffer,
  aStart: number,
  aEnd: number,
  b: Buffer,
  bStart: number,
  bEnd: number,
): number {
  const n = Math.min(aEnd - aStart, bEnd - bStart)
  let i = 0
  while (i < n && a[aStart + i] === b[bStart + i]) i++
  return i
}

function writeVarint(out: Buffer, at: number, value: number): number {
  while (value >= 0x80) {
    out[at++] = (value & 0x7f) | 0x80
    value = Math.floor(value / 0x80)
  }
  out[at++] = value
  return at
}
