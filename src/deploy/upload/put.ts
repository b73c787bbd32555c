// One PUT on the wire through undici's dispatch API, and its answer.
import type { Dispatcher } from 'undici'
import type { InFlight, InFlightPuts } from './watchdog.ts'

/** S3's XML errors are far smaller. */
const ERROR_BODY_LIMIT = 8 * 1024

export interface PutRequest {
  dispatcher: Dispatcher
  url: string
  headers: Record<string, string>
  body: Buffer | AsyncIterable<Buffer>
  inFlight: InFlightPuts
  /** In all, progress or not. */
  deadlineMs: number
  restartable: boolean
  /** Each chunk undici wrote to the socket. */
  onSent: (chunk: Buffer) => void
}

export interface StoreAnswer {
  status: number
  etag: string | undefined
  /** The start of a non-2xx answer's body. */
  text: string
}

/** undici's request() tells nothing of the bytes as written (onBodySent): the watchdog's progress, the bytes hashed. */
export function dispatchPut(request: PutRequest): Promise<StoreAnswer> {
  const { url } = request
  // The origin and the rest as they came, byte for byte as signed (a URL object may re-encode them).
  const slash = url.indexOf('/', url.indexOf('//') + 2)
  const origin = slash < 0 ? url : url.slice(0, slash)
  const path = slash < 0 ? '/' : url.slice(slash)
  return new Promise<StoreAnswer>((resolve, reject) => {
    const handler = new PutHandler(request, resolve, reject)
    try {
      // undici 6 takes an async iterable body too (core/request.js); its types leave it out.
      request.dispatcher.dispatch(
        {
          origin,
          path,
          method: 'PUT',
          headers: request.headers,
          // The watchdog is what ends a quiet or overlong PUT: undici's own timers would be a second.
          headersTimeout: 0,
          bodyTimeout: 0,
          body: request.body as Dispatcher.DispatchOptions['body'],
        },
        handler as unknown as Dispatcher.DispatchHandlers,
      )
    } catch (error) {
      handler.onError(error instanceof Error ? error : new Error(String(error)))
    }
  })
}

/**
 * The answer is taken as soon as known: a 2xx with its headers (its body never read), an error's body
 * up to ERROR_BODY_LIMIT or as far as it came. The request stays in flight until it ends or is aborted.
 */
class PutHandler implements InFlight {
  slot = -1
  lastProgress: number
  readonly deadline: number
  readonly limit: number
  readonly restartable: boolean
  answered = false
  private status = 0
  private etag: string | undefined
  private chunks: Buffer[] | undefined
  private kept = 0
  private abortRequest: ((reason: Error) => void) | undefined
  private pending: Error | undefined
  private settled = false
  private finished = false
  private readonly inFlight: InFlightPuts
  private readonly onSent: (chunk: Buffer) => void
  private readonly resolve: (answer: StoreAnswer) => void
  private readonly reject: (error: Error) => void

  constructor(request: PutRequest, resolve: (answer: StoreAnswer) => void, reject: (error: Error) => void) {
    this.inFlight = request.inFlight
    this.lastProgress = request.inFlight.clock.now()
    this.limit = request.deadlineMs
    this.restartable = request.restartable
    this.deadline = this.lastProgress + request.deadlineMs
    this.onSent = request.onSent
    this.resolve = resolve
    this.reject = reject
    request.inFlight.add(this)
  }

  abort(reason: Error): void {
    if (this.abortRequest) this.abortRequest(reason)
    else this.pending = reason
  }

  onConnect(abort: (reason: Error) => void): void {
    this.abortRequest = abort
    if (this.pending) abort(this.pending)
  }

  // undici 6 calls it with each chunk written to the socket (its types say a size).
  onBodySent(chunk: Buffer | string): void {
    this.inFlight.progressed(this, this.inFlight.clock.now())
    this.onSent(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.inFlight.progressed(this, this.inFlight.clock.now())
    this.answered = true
    this.status = statusCode
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!
      if (name.length === 4 && name.toString('latin1').toLowerCase() === 'etag') {
        this.etag = rawHeaders[i + 1]!.toString('latin1')
      }
    }
    if (statusCode < 200 || statusCode >= 300) this.chunks = []
    else this.answer()
    return true
  }

  onData(chunk: Buffer): boolean {
    if (this.chunks && !this.settled) {
      this.chunks.push(chunk)
      this.kept += chunk.length
      if (this.kept >= ERROR_BODY_LIMIT) this.answer()
    }
    return true
  }

  onComplete(): void {
    this.leave()
    this.answer()
  }

  onError(error: Error): void {
    this.leave()
    // An answer whose headers came is taken as far as it came, whatever cut its body short.
    if (this.answered) this.answer()
    else if (!this.settled) {
      this.settled = true
      this.reject(error)
    }
  }

  private answer(): void {
    if (this.settled) return
    this.settled = true
    const text = this.chunks ? Buffer.concat(this.chunks).toString('utf8').slice(0, ERROR_BODY_LIMIT) : ''
    this.chunks = undefined
    this.resolve({ status: this.status, etag: this.etag, text })
  }

  private leave(): void {
    if (this.finished) return
    this.finished = true
    this.inFlight.delete(this)
  }
}
