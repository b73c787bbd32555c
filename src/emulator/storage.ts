// Uploaded bytes on disk: one file per part while uploading, one file per site file once completed.
// Everything is streamed: a part can be 100 MiB and a site 1 GB.

import { createHash, randomUUID } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, mkdtemp, readFile, rename, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

export class PartStorage {
  readonly dir: string
  private readonly removeOnClose: boolean
  private readonly madeDirs = new Map<string, Promise<void>>()

  private constructor(dir: string, removeOnClose: boolean) {
    this.dir = dir
    this.removeOnClose = removeOnClose
  }

  /** Uses `dir` when given (and leaves it in place on close), else a fresh temp dir removed on close. */
  static async open(dir?: string): Promise<PartStorage> {
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

  /** Concatenates a file's parts in order into the site file; answers its size in bytes. */
  async assembleFile(uploadId: string, fileIndex: number, partCount: number): Promise<number> {
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
    return readFile(this.filePath(uploadId, fileIndex))
  }

  async close(): Promise<void> {
    if (this.removeOnClose) await rm(this.dir, { recursive: true, force: true })
  }

  private partPath(uploadId: string, fileIndex: number, partIndex: number): string {
    return join(this.dir, uploadId, 'parts', `${fileIndex}-${partIndex}`)
  }
}
