import { urlExpiry } from './expiry.ts'
import type { PresignedRequest } from './types.ts'

/** Bytes per buffer of paths and URLs. */
const CHUNK = 1024 * 1024

/**
 * A site's presigned requests, their paths and URLs kept as UTF-8 bytes in a few large buffers with
 * their offsets in arrays of numbers, rather than as one object and two strings per request.
 *
 * Why: as strings, a large site's URLs would live in V8's heap from the site's answer to the last
 * PUT; they survive every young collection of that time, and the bytes that survive are what makes
 * V8 double its young generation, the largest part of the deploy's peak (see BENCHMARKS.md). In
 * buffers they are outside the heap, and each URL becomes a string only for the PUT that uses it.
 */
export class PresignedRequestList implements Iterable<PresignedRequest> {
  readonly #chunks: Buffer[] = []
  /**
   * Bytes used of the last chunk; as if full at first, so the first push makes a chunk of its own
   * (before the first one, or past the buffers a split list shares).
   */
  #used = Infinity
  // Per request: its chunk, where its path starts there, its path's and URL's byte lengths.
  readonly #chunk: number[] = []
  readonly #start: number[] = []
  readonly #pathBytes: number[] = []
  readonly #urlBytes: number[] = []
  readonly #byteOffset: number[] = []
  readonly #contentLength: number[] = []
  /** When the URL stops working, ms since the epoch; Infinity when unknown (see urlExpiry). */
  readonly #expiry: number[] = []

  static of(requests: Iterable<PresignedRequest>): PresignedRequestList {
    const list = new PresignedRequestList()
    for (const request of requests) list.push(request)
    return list
  }

  get length(): number {
    return this.#start.length
  }

  push(request: PresignedRequest): void {
    const pathBytes = Buffer.byteLength(request.path)
    const urlBytes = Buffer.byteLength(request.url)
    const bytes = pathBytes + urlBytes
    const chunk = this.#room(bytes)
    chunk.write(request.path, this.#used)
    chunk.write(request.url, this.#used + pathBytes)
    this.#chunk.push(this.#chunks.length - 1)
    this.#start.push(this.#used)
    this.#pathBytes.push(pathBytes)
    this.#urlBytes.push(urlBytes)
    this.#byteOffset.push(request.byte_offset)
    this.#contentLength.push(request.content_length)
    this.#expiry.push(urlExpiry(request.url) ?? Infinity)
    this.#used += bytes
  }

  /**
   * The requests for `path`, and the others, as two lists that read this list's buffers: no byte is
   * copied, no string made per request.
   */
  split(path: string): { matching: PresignedRequestList; others: PresignedRequestList } {
    const wanted = Buffer.from(path)
    const matching = this.#sharing()
    const others = this.#sharing()
    for (let i = 0; i < this.length; i++) {
      const chunk = this.#chunks[this.#chunk[i]!]!
      const start = this.#start[i]!
      const same =
        this.#pathBytes[i] === wanted.length &&
        chunk.compare(wanted, 0, wanted.length, start, start + wanted.length) === 0
      ;(same ? matching : others).#take(this, i)
    }
    return { matching, others }
  }

  /** An empty list over this list's buffers; a request pushed to it goes to a buffer of its own. */
  #sharing(): PresignedRequestList {
    const list = new PresignedRequestList()
    list.#chunks.push(...this.#chunks)
    return list
  }

  /** Appends request `index` of `from`, whose buffers this list shares. */
  #take(from: PresignedRequestList, index: number): void {
    this.#chunk.push(from.#chunk[index]!)
    this.#start.push(from.#start[index]!)
    this.#pathBytes.push(from.#pathBytes[index]!)
    this.#urlBytes.push(from.#urlBytes[index]!)
    this.#byteOffset.push(from.#byteOffset[index]!)
    this.#contentLength.push(from.#contentLength[index]!)
    this.#expiry.push(from.#expiry[index]!)
  }

  /** The chunk the next `bytes` are written to: the last one, or a new one when they do not fit. */
  #room(bytes: number): Buffer {
    if (this.#used + bytes > (this.#chunks.at(-1)?.length ?? 0)) {
      this.#chunks.push(Buffer.allocUnsafe(Math.max(CHUNK, bytes)))
      this.#used = 0
    }
    return this.#chunks.at(-1)!
  }

  path(index: number): string {
    const start = this.#start[index]!
    return this.#chunks[this.#chunk[index]!]!.toString('utf8', start, start + this.#pathBytes[index]!)
  }

  url(index: number): string {
    const start = this.#start[index]! + this.#pathBytes[index]!
    return this.#chunks[this.#chunk[index]!]!.toString('utf8', start, start + this.#urlBytes[index]!)
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

  *[Symbol.iterator](): Iterator<PresignedRequest> {
    for (let i = 0; i < this.length; i++) {
      yield {
        path: this.path(i),
        url: this.url(i),
        byte_offset: this.byteOffset(i),
        content_length: this.contentLength(i),
      }
    }
  }
}
