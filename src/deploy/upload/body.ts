// A part's body: bytes read from the file the scan found (checked to be that file, unchanged), or
// bytes the caller holds in memory (the close's page), and the digests of the bytes sent.
import { fstatSync, read, type Stats } from 'node:fs'
import { closeNow, readAt, type OpenFile } from '../fd.ts'
import { assertScannedFile, openScanned, READ_BUFFER, reopenScanned, type ArtifactFile } from '../files.ts'
import { assertUnchanged, digestsOf, sentHash, shrank, type SentDigests } from './integrity.ts'
import { isBytesFile, type Part } from './plan.ts'

export interface PartBody {
  readonly body: Buffer | AsyncIterable<Buffer>
  /** A chunk undici wrote to the socket: a streamed body is hashed from exactly these. */
  sent(chunk: Buffer): void
  /** Once every byte was sent. */
  digests(): SentDigests
  /** The PUT is over: the file is closed; once stored, a streamed file is checked unchanged (throws). */
  end(stored: boolean): Promise<void>
}

const RING = 3
const SMALL_PART = 1024 * 1024
const REUSED_BUFFER = 64 * 1024

export async function openBody(
  part: Part,
  offset: number,
  length: number,
  openWith: OpenFile | undefined,
  buffers: Buffer[],
): Promise<PartBody> {
  const { file } = part
  if (isBytesFile(file)) return new BytesBody(file.bytes.subarray(offset, offset + length))
  if (length > SMALL_PART) return streamedBody(await openScanned(file, openWith), file, offset, length)
  // The smallest go into a buffer an earlier PUT sent: a new buffer per file stays outside V8's heap
  // until its wrapper is collected (the 20,000-file peak, BENCHMARKS.md).
  const reused = length <= REUSED_BUFFER ? reusableBuffer(buffers, length) : undefined
  return new BytesBody(await readRange(file, offset, length, reused, openWith), reused, buffers)
}

/** Never more buffers than PUTs in flight, none larger than REUSED_BUFFER. */
function reusableBuffer(buffers: Buffer[], length: number): Buffer {
  const buffer = buffers.pop()
  if (buffer && buffer.length >= length) return buffer
  return Buffer.allocUnsafe(Math.max(4096, 2 ** Math.ceil(Math.log2(length))))
}

/**
 * Bytes sent as one buffer. A class, not an object of closures: the state of a PUT in flight is what
 * outlives V8's young collections (BENCHMARKS.md).
 */
class BytesBody implements PartBody {
  readonly body: Buffer
  /** A buffer an earlier PUT sent, that `body` is in, and where it goes back once stored. */
  readonly #reused: Buffer | undefined
  readonly #buffers: Buffer[] | undefined
  #digests: SentDigests | undefined

  constructor(body: Buffer, reused?: Buffer, buffers?: Buffer[]) {
    this.body = body
    this.#reused = reused
    this.#buffers = buffers
  }

  sent(): void {}

  digests(): SentDigests {
    return (this.#digests ??= digestsOf(this.body))
  }

  // Answered 2xx: the store has every byte, so none is still queued to be written from the buffer.
  end(stored: boolean): Promise<void> {
    if (stored && this.#reused) {
      this.digests()
      this.#buffers!.push(this.#reused)
    }
    return Promise.resolve()
  }
}

/**
 * One fstat after the read tells that it is the scanned file and unchanged, before a byte is sent.
 * One promise for the open, the reads and the fstat (fs's callbacks): a web build is mostly small
 * files, and a promise per call was a quarter of what the upload allocated (BENCHMARKS.md).
 */
function readRange(
  file: ArtifactFile,
  offset: number,
  length: number,
  into: Buffer | undefined,
  openWith: OpenFile | undefined,
): Promise<Buffer> {
  const bytes = into ? into.subarray(0, length) : Buffer.allocUnsafe(length)
  return new Promise((resolve, reject) => {
    let fd: number
    let done = 0
    const onRead = (error: Error | null, bytesRead: number) => {
      try {
        if (error) {
          assertScannedFile(file, fstatSync(fd))
          throw error
        }
        if (bytesRead === 0 && done < length) throw shrank(file)
        done += bytesRead
        if (done < length) return read(fd, bytes, done, length - done, offset + done, onRead)
        const stats = fstatSync(fd)
        assertScannedFile(file, stats)
        assertUnchanged(file, stats)
        closeNow(fd)
        resolve(bytes)
      } catch (failure) {
        closeNow(fd)
        reject(failure instanceof Error ? failure : new Error(String(failure)))
      }
    }
    reopenScanned(file, openWith, (error, opened) => {
      if (error) return reject(error)
      fd = opened
      // An empty file is read no further: its fstat alone says it is the scanned one, unchanged.
      if (length === 0) onRead(null, 0)
      else read(fd, bytes, 0, length, offset, onRead)
    })
  })
}

/**
 * A streamed part, each chunk hashed as undici writes it, read into RING buffers used in turn
 * (BENCHMARKS.md). Safe because undici waits for 'drain' past its high-water mark (less than a
 * chunk): when the next chunk is asked for, every chunk before the last has left the process.
 */
function streamedBody(fd: number, file: ArtifactFile, offset: number, length: number): PartBody {
  let started = false
  let stats: Stats | undefined
  async function* chunks(): AsyncGenerator<Buffer> {
    started = true
    try {
      const size = Math.min(READ_BUFFER, length)
      const ring = Array.from({ length: RING }, () => Buffer.allocUnsafe(size))
      for (let done = 0, turn = 0; done < length; turn++) {
        const buffer = ring[turn % RING]!
        const bytesRead = await readAt(fd, buffer, 0, Math.min(size, length - done), offset + done)
        if (bytesRead === 0) throw shrank(file)
        done += bytesRead
        // Before the last bytes go: the PUT may be answered before undici asks for the end.
        if (done === length) stats = fstatSync(fd)
        yield buffer.subarray(0, bytesRead)
      }
    } finally {
      closeNow(fd)
    }
  }
  const body = chunks()
  return {
    body,
    ...sentHash(),
    // A started reader closes its file in its own `finally` (after a read in progress); else here.
    async end(stored) {
      await body.return(undefined).catch(() => {})
      if (!started) {
        started = true
        closeNow(fd)
      }
      if (!stored) return
      if (!stats) throw shrank(file)
      assertUnchanged(file, stats)
    },
  }
}
