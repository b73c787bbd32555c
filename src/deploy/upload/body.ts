// A part's body: bytes read from the file the scan found (checked to be that file, unchanged), or
// bytes the caller holds in memory (the close's page), and the digests of the bytes sent.
import { fstatSync, type Stats } from 'node:fs'
import { closeNow, readAt, type OpenFile } from '../fd.ts'
import { assertScannedFile, openAtScannedPath, openScanned, type ArtifactFile } from '../files.ts'
import { assertUnchanged, digestsOf, SentHash, shrank, type SentDigests } from './integrity.ts'
import { isBytesFile, type Part } from './plan.ts'

/** A part's body, ready to send, and what is known of it once sent. */
export interface PartBody {
  readonly body: Buffer | AsyncIterable<Buffer>
  /** A chunk undici wrote to the socket: a streamed body is hashed from exactly these. */
  sent(chunk: Buffer): void
  /** The MD5 and SHA-256 of the bytes sent (see integrity.ts), once every byte was. */
  digests(): SentDigests
  /** The PUT is over: the file is closed; once stored, a streamed file is checked unchanged (throws). */
  end(stored: boolean): Promise<void>
}

const READ_BUFFER = 256 * 1024
/** Read buffers per streamed part, used in turn (see ChunkReader). */
const RING = 3
/** Parts up to this size are read whole; larger ones are streamed. */
const SMALL_PART = 1024 * 1024
/** Parts up to this size are read into a buffer reused from PUT to PUT (see reusableBuffer). */
const REUSED_BUFFER = 64 * 1024

/** The body of bytes offset..offset+length of the part's file. */
export async function openBody(
  part: Part,
  offset: number,
  length: number,
  openWith: OpenFile | undefined,
  buffers: Buffer[],
): Promise<PartBody> {
  const { file } = part
  if (isBytesFile(file)) return bytesBody(file.bytes.subarray(offset, offset + length))
  if (length > SMALL_PART) return new ChunkReader(await openScanned(file, openWith), file, offset, length)
  // The smallest go into a buffer an earlier PUT sent: a new buffer per file is memory outside V8's
  // heap that stays until V8 collects its wrapper (the 20,000-file peak 260 to 347 MiB without it).
  const reused = length <= REUSED_BUFFER ? reusableBuffer(buffers, length) : undefined
  const body = bytesBody(await readRange(file, offset, length, reused, openWith))
  // Answered 2xx: the store has every byte, so none is still queued to be written from the buffer.
  body.end = (stored) => {
    if (stored && reused) {
      body.digests()
      buffers.push(reused)
    }
    return Promise.resolve()
  }
  return body
}

/**
 * A buffer of at least `length` bytes that an earlier PUT sent, or a new one of the next power of two
 * (4 KiB at least). There are never more buffers than PUTs in flight, none larger than REUSED_BUFFER.
 */
function reusableBuffer(buffers: Buffer[], length: number): Buffer {
  const buffer = buffers.pop()
  if (buffer && buffer.length >= length) return buffer
  return Buffer.allocUnsafe(Math.max(4096, 2 ** Math.ceil(Math.log2(length))))
}

function bytesBody(bytes: Buffer): PartBody {
  let digests: SentDigests | undefined
  return {
    body: bytes,
    sent: () => {},
    digests: () => (digests ??= digestsOf(bytes)),
    end: async () => {},
  }
}

/**
 * Bytes offset..offset+length of the file, read in one go (small parts only), from the file the scan
 * opened: one fstat once they are read tells both that it is that file and that it is unchanged,
 * before any of them is sent. A read that fails on something that is no longer the file fails naming
 * it as replaced.
 */
async function readRange(
  file: ArtifactFile,
  offset: number,
  length: number,
  into: Buffer | undefined,
  openWith: OpenFile | undefined,
): Promise<Buffer> {
  const bytes = into ? into.subarray(0, length) : Buffer.allocUnsafe(length)
  const fd = await openAtScannedPath(file, openWith)
  try {
    try {
      for (let done = 0; done < length;) {
        const bytesRead = await readAt(fd, bytes, done, length - done, offset + done)
        if (bytesRead === 0) throw shrank(file)
        done += bytesRead
      }
    } catch (error) {
      assertScannedFile(file, fstatSync(fd))
      throw error
    }
    const stats = fstatSync(fd)
    assertScannedFile(file, stats)
    assertUnchanged(file, stats)
    return bytes
  } finally {
    closeNow(fd)
  }
}

/**
 * A streamed part: its bytes in chunks of up to READ_BUFFER, each hashed as undici writes it, read into
 * RING buffers used in turn instead of a new buffer per read, as a read stream makes (the mixed site
 * in 0.73x the time, BENCHMARKS.md). Safe because undici writes an iterable body chunk by chunk and
 * waits for 'drain' whenever the socket holds more than its high-water mark (64 KiB, 16 KiB with TLS:
 * less than a chunk): when the next chunk is asked for, the last full one was at least partly
 * written, so every chunk before it has left the process; a buffer is reused only RING chunks later,
 * which leaves room for one short read. The MD5 of what was sent is checked against the ETag anyway.
 * The file was opened (openScanned) before the PUT, so no byte of another file is ever sent.
 */
class ChunkReader implements PartBody {
  readonly body: AsyncGenerator<Buffer>
  readonly fd: number
  readonly file: ArtifactFile
  readonly #hash = new SentHash()
  #started = false
  /** The file's fstat once every byte of the part was read. */
  #stats: Stats | undefined

  constructor(fd: number, file: ArtifactFile, offset: number, length: number) {
    this.fd = fd
    this.file = file
    this.body = this.#chunks(offset, length)
  }

  sent(chunk: Buffer): void {
    this.#hash.update(chunk)
  }

  digests(): SentDigests {
    return this.#hash.digests()
  }

  /**
   * A reader undici started closes its file in its own `finally` (return() waits for a read in
   * progress to end first, so the descriptor is never closed under it); one it never started is
   * closed here.
   */
  async end(stored: boolean): Promise<void> {
    await this.body.return(undefined).catch(() => {})
    if (!this.#started) {
      this.#started = true
      closeNow(this.fd)
    }
    if (!stored) return
    if (!this.#stats) throw shrank(this.file)
    assertUnchanged(this.file, this.#stats)
  }

  async *#chunks(offset: number, length: number): AsyncGenerator<Buffer> {
    this.#started = true
    try {
      const size = Math.min(READ_BUFFER, length)
      const ring = Array.from({ length: RING }, () => Buffer.allocUnsafe(size))
      for (let done = 0, turn = 0; done < length; turn++) {
        const buffer = ring[turn % RING]!
        const bytesRead = await readAt(this.fd, buffer, 0, Math.min(size, length - done), offset + done)
        if (bytesRead === 0) throw shrank(this.file)
        done += bytesRead
        // Checked after the last read, before its bytes go: the PUT may be answered before undici
        // asks for the end of the chunks.
        if (done === length) this.#stats = fstatSync(this.fd)
        yield buffer.subarray(0, bytesRead)
      }
    } finally {
      closeNow(this.fd)
    }
  }
}
