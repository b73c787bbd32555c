import { urlExpiry } from './expiry.ts'
import type { PresignedRequest } from './types.ts'

/** A site's presigned requests, each with when its URL stops working. */
export class PresignedRequestList implements Iterable<PresignedRequest> {
  readonly #requests: PresignedRequest[] = []
  /** When the URL stops working, ms since the epoch; Infinity when unknown (see urlExpiry). */
  readonly #expiry: number[] = []

  static of(requests: Iterable<PresignedRequest>): PresignedRequestList {
    const list = new PresignedRequestList()
    for (const request of requests) list.push(request)
    return list
  }

  get length(): number {
    return this.#requests.length
  }

  push(request: PresignedRequest): void {
    const { path, url, byte_offset, content_length } = request
    this.#requests.push({ path, url, byte_offset, content_length })
    this.#expiry.push(urlExpiry(request.url) ?? Infinity)
  }

  /** The requests for `path`, and the others, as two lists. */
  split(path: string): { matching: PresignedRequestList; others: PresignedRequestList } {
    const matching = new PresignedRequestList()
    const others = new PresignedRequestList()
    for (const request of this.#requests) (request.path === path ? matching : others).push(request)
    return { matching, others }
  }

  path(index: number): string {
    return this.#requests[index]!.path
  }

  url(index: number): string {
    return this.#requests[index]!.url
  }

  byteOffset(index: number): number {
    return this.#requests[index]!.byte_offset
  }

  contentLength(index: number): number {
    return this.#requests[index]!.content_length
  }

  expiry(index: number): number {
    return this.#expiry[index]!
  }

  [Symbol.iterator](): Iterator<PresignedRequest> {
    return this.#requests[Symbol.iterator]()
  }
}
