// The one place the upload's integrity is kept: the SHA-256 of every file published, and the MD5 the
// store's ETag is checked against, come from the bytes as they were sent. A file sent in one PUT is
// hashed from that PUT's bytes. A file sent in parts is read once more after its last part is stored,
// and each part's bytes as sent must be that read's: its SHA-256 is then the one of the bytes sent. A
// file hashed before the upload (digest first) must have been sent as it was hashed. Any difference,
// same size and time included, fails the upload naming the file, before it is completed.
import { createHash, hash, type Hash } from 'node:crypto'
import { fstatSync, type Stats } from 'node:fs'
import pLimit from 'p-limit'
import type { PresignedRequestList } from '../../api/presigned.ts'
import { closeFile, lstatFile, readAt, type OpenFile } from '../fd.ts'
import { isScannedFile, openScanned, type ArtifactFile } from '../files.ts'
import { isBytesFile, type Part, type UploadFile, type UploadPlan } from './plan.ts'

/** The MD5 and SHA-256 (hex) of the bytes a PUT sent. */
export interface SentDigests {
  md5: string
  sha256: string
}

export function digestsOf(bytes: Buffer): SentDigests {
  return { md5: hash('md5', bytes), sha256: hash('sha256', bytes) }
}

/** The digests of a streamed part, fed each chunk as it is sent. */
export class SentHash {
  readonly #md5 = createHash('md5')
  readonly #sha256 = createHash('sha256')
  #digests: SentDigests | undefined

  update(chunk: Buffer): void {
    this.#md5.update(chunk)
    this.#sha256.update(chunk)
  }

  /** Once every byte was sent. */
  digests(): SentDigests {
    this.#digests ??= { md5: this.#md5.digest('hex'), sha256: this.#sha256.digest('hex') }
    return this.#digests
  }
}

export interface IntegrityOptions {
  files: readonly UploadFile[]
  plan: UploadPlan
  requests: PresignedRequestList
  /** The SHA-256 of each file when it was hashed before the upload, by its index; undefined: not hashed. */
  expected: readonly (string | undefined)[] | undefined
  open: OpenFile | undefined
  /** A file sent in parts was found changed: the upload stops with this error. */
  failed: (error: Error) => void
}

/** What the upload proved of each file, from the parts stored. */
export class Integrity {
  /** The SHA-256 of each file, by its index, once proved. */
  readonly digests: string[]
  readonly #options: IntegrityOptions
  /** The SHA-256 of each stored part of a file sent in parts, by its request's index. */
  readonly #sent: string[] = []
  /** The parts of each file not stored yet, by the file's index. */
  readonly #left: number[]
  readonly #checks: Promise<void>[] = []
  readonly #limit = pLimit(2)

  constructor(options: IntegrityOptions) {
    this.#options = options
    this.digests = new Array<string>(options.files.length)
    this.#left = [...options.plan.partCount]
  }

  /**
   * The part was stored with these bytes: a file in one part has its digest now (throws naming it
   * when it was hashed first, otherwise); a file in parts is read again once its last part is stored.
   */
  stored(part: Part, sent: SentDigests): void {
    const f = part.fileIndex
    if (part.of === 1) return this.#prove(f, sent.sha256)
    this.#sent[part.index] = sent.sha256
    if (--this.#left[f]! > 0) return
    const check = this.#limit(() => this.#checkParts(f))
    check.catch((error: unknown) => this.#options.failed(error as Error))
    this.#checks.push(check)
  }

  /** Once every part is stored: the SHA-256 of each file (rejects naming a file that changed). */
  async finish(): Promise<string[]> {
    await Promise.all(this.#checks)
    await this.#checkUnrequested()
    return this.digests
  }

  #prove(f: number, sha256: string): void {
    const expected = this.#options.expected?.[f]
    if (expected !== undefined && expected !== sha256) {
      throw changed(this.#options.files[f]!, 'the bytes sent are not the ones hashed before the upload')
    }
    this.digests[f] = sha256
  }

  /** Reads the file in order: each part's range must hash as its bytes sent did; the whole gives its SHA-256. */
  async #checkParts(f: number): Promise<void> {
    const { files, plan, requests } = this.#options
    const file = files[f]!
    const list = plan.inParts.get(f)!
    const whole = createHash('sha256')
    let range: Hash = createHash('sha256')
    let r = 0
    const closeRanges = (position: number) => {
      for (; r < list.length; r++) {
        const i = list[r]!
        if (requests.byteOffset(i) + requests.contentLength(i) > position) return
        if (range.digest('hex') !== this.#sent[i]) {
          throw changed(file, `part ${r + 1}/${list.length} as sent is not what the file holds now`)
        }
        range = createHash('sha256')
      }
    }
    await readInOrder(file, this.#options.open, (chunk, offset) => {
      for (let at = 0; at < chunk.length;) {
        closeRanges(offset + at)
        const i = list[r]!
        const take = Math.min(
          chunk.length - at,
          requests.byteOffset(i) + requests.contentLength(i) - offset - at,
        )
        range.update(chunk.subarray(at, at + take))
        at += take
      }
      whole.update(chunk)
    })
    closeRanges(file.size)
    this.#prove(f, whole.digest('hex'))
  }

  /**
   * A file no request asked for (an empty one: planUpload checked that requests cover every byte)
   * is checked to be the file the scan found, as it was, and given the SHA-256 of no bytes.
   */
  async #checkUnrequested(): Promise<void> {
    const { files, plan } = this.#options
    for (const [f, count] of plan.partCount.entries()) {
      if (count !== 0) continue
      const file = files[f]!
      if (!isBytesFile(file)) {
        const now = await lstatFile(file.absolutePath).catch((error: unknown) => {
          throw new Error(`${file.path} was removed after it was scanned`, { cause: error })
        })
        if (!isScannedFile(file, now)) {
          throw new Error(
            `${file.path} was replaced after it was scanned: another file or a link is at its path now`,
          )
        }
        assertUnchanged(file, now)
      }
      this.#prove(f, hash('sha256', ''))
    }
  }
}

/** Each chunk of the file's bytes in order, with its offset; the file checked unchanged once read. */
async function readInOrder(
  file: UploadFile,
  openWith: OpenFile | undefined,
  chunk: (bytes: Buffer, offset: number) => void,
): Promise<void> {
  if (isBytesFile(file)) return chunk(file.bytes, 0)
  const fd = await openScanned(file, openWith)
  try {
    const buffer = Buffer.allocUnsafe(Math.min(256 * 1024, Math.max(1, file.size)))
    for (let done = 0; done < file.size;) {
      const bytesRead = await readAt(fd, buffer, 0, Math.min(buffer.length, file.size - done), done)
      if (bytesRead === 0) throw shrank(file)
      chunk(buffer.subarray(0, bytesRead), done)
      done += bytesRead
    }
    assertUnchanged(file, fstatSync(fd))
  } finally {
    await closeFile(fd)
  }
}

function changed(file: UploadFile, why: string): Error {
  return new Error(`${file.path} changed while it was uploaded: ${why}; the upload was not completed`)
}

export function shrank(file: ArtifactFile): Error {
  return changed(file, 'it is shorter than when it was scanned')
}

/**
 * A file read for the upload is as the scan found it, checked through the descriptor it was read
 * from once read. fstat on a descriptor held open reads an inode the kernel already has (NFS too: the
 * open revalidated it), so it is made synchronously rather than as a round trip through the thread
 * pool. A change of its bytes alone is caught by the digests above.
 */
export function assertUnchanged(file: ArtifactFile, now: Stats): void {
  if (now.size !== file.size || now.mtimeMs !== file.mtimeMs) {
    throw changed(file, `its size or time is not the scan's (size ${file.size} -> ${now.size})`)
  }
}
