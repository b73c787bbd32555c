// Uploaded bytes on disk: one file per part while uploading, one file per site file once completed.
// Everything is streamed: a part can be 100 MiB and a site 1 GB. Or, for the benchmark, nowhere: each
// part's bytes counted and dropped (discardBytes).

import { createHash, randomUUID } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, mkdtemp, readFile, rename, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { finished, pipeline } from 'node:stream/promises'

/** What a part stored by a storage that discards its bytes answers instead of its MD5. */
const DISCARDED = 'discarded'

export class PartStorage {
  readonly dir: string
  private readonly removeOnClose: boolean
  private readonly madeDirs = new Map<string, Promise<void>>()
  /** The size of each part received, by partPath, when the bytes are discarded (else undefined). */
  private readonly discardedSizes: Map<string, number> | undefined

  private constructor(dir: string, removeOnClose: boolean, discard = false) {
    this.dir = dir
    this.removeOnClose = removeOnClose
    this.discardedSizes = discard ? new Map() : undefined
  }

  /**
   * Uses `dir` when given (and leaves it in place on close), else a fresh temp dir removed on close;
   * with `discard`, no folder at all: the bytes are counted and dropped.
   */
  static async open(dir?: string, discard = false): Promise<PartStorage> {
    if (discard) return new PartStorage('', false, true)
    if (dir !== undefined) {
      await mkdir(dir, { recursive: true })
      return new PartStorage(dir, false)
    }
    return new PartStorage(await mkdtemp(join(tmpdir(), 'gamehost-emulator-')), true)
  }

  /**
   * Streams a part's body to disk while hashing it. Answers the MD5 hex of the bytes, or undefined when
   * the body ended before `length` bytes (nothing is stored then). A part written again replaces the
   * previous one only once the new body is complete. With `corruptByteAt`, the byte at that position
   * is flipped before it is hashed and stored (a fault injected "in transit").
   */
  async writePart(
    uploadId: string,
    fileIndex: number,
    partIndex: number,
    body: Readable,
    length: number,
    corruptByteAt?: number,
  ) {
    if (this.discardedSizes)
      return this.discardPart(this.partPath(uploadId, fileIndex, partIndex), body, length)
    const target = this.partPath(uploadId, fileIndex, partIndex)
    const temporary = `${target}.${randomUUID()}.tmp`
    await this.ensureDir(join(this.dir, uploadId, 'parts'))
    const hash = createHash('md5')
    let received = 0
    try {
      await pipeline(
        body,
        async function* (source: AsyncIterable<Buffer>) {
          for await (let chunk of source) {
            if (corruptByteAt !== undefined && corruptByteAt >= received) {
              const at = corruptByteAt - received
              if (at < chunk.length) {
                chunk = Buffer.from(chunk)
                chunk[at] = (chunk[at] ?? 0) ^ 0xff
              }
            }
            received += chunk.length
            hash.update(chunk)
            yield chunk
          }
        },
        createWriteStream(temporary),
      )
    } catch {
      received = -1
    }
    if (received !== length) {
      await rm(temporary, { force: true })
      return undefined
    }
    await rename(temporary, target)
    return hash.digest('hex')
  }

  /** Reads a part's body to its end, counting its bytes; DISCARDED when they were `length`. */
  private async discardPart(target: string, body: Readable, length: number): Promise<string | undefined> {
    let received = 0
    body.on('data', (chunk: Buffer) => (received += chunk.length))
    try {
      await finished(body)
    } catch {
      return undefined
    }
    if (received !== length) return undefined
    this.discardedSizes!.set(target, received)
    return DISCARDED
  }

  /** Concatenates a file's parts in order into the site file; answers its size in bytes. */
  async assembleFile(uploadId: string, fileIndex: number, partCount: number): Promise<number> {
    if (this.discardedSizes) {
      let size = 0
      for (let partIndex = 0; partIndex < partCount; partIndex++) {
        const part = this.partPath(uploadId, fileIndex, partIndex)
        size += this.discardedSizes.get(part) ?? 0
        this.discardedSizes.delete(part)
      }
      return size
    }
    const target = this.filePath(uploadId, fileIndex)
    const parts = Array.from({ length: partCount }, (_, partIndex) =>
      this.partPath(uploadId, fileIndex, partIndex),
    )
    await this.ensureDir(join(this.dir, uploadId, 'files'))
    // A file of one part is that part: moved, not copied (most files of a site).
    if (parts.length === 1) await rename(parts[0]!, target)
    else
      await pipeline(async function* () {
        for (const part of parts) yield* createReadStream(part)
      }, createWriteStream(target))
    return (await stat(target)).size
  }

  /** Parts are no longer needed once an upload is complete. */
  async discardParts(uploadId: string): Promise<void> {
    if (this.discardedSizes) return
    await rm(join(this.dir, uploadId, 'parts'), { recursive: true, force: true })
    this.madeDirs.delete(join(this.dir, uploadId, 'parts'))
  }

  /** mkdir -p, once per folder: a site's thousands of parts share two folders. */
  private ensureDir(dir: string): Promise<void> {
    let made = this.madeDirs.get(dir)
    if (!made) {
      made = mkdir(dir, { recursive: true }).then(() => undefined)
      this.madeDirs.set(dir, made)
    }
    return made
  }

  filePath(uploadId: string, fileIndex: number): string {
    return join(this.dir, uploadId, 'files', String(fileIndex))
  }

  readFile(uploadId: string, fileIndex: number): Promise<Buffer> {
    if (this.discardedSizes) return Promise.reject(new Error('the emulator discards the bytes it receives'))
    return readFile(this.filePath(uploadId, fileIndex))
  }

  async close(): Promise<void> {
    if (this.removeOnClose) await rm(this.dir, { recursive: true, force: true })
  }

  private partPath(uploadId: string, fileIndex: number, partIndex: number): string {
    return join(this.dir, uploadId, 'parts', `${fileIndex}-${partIndex}`)
  }
}
