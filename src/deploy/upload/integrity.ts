// The one place the upload's integrity is kept: every SHA-256 published, and the MD5 the ETag is
// checked against, come from the bytes as sent. A file in parts is read once more after its last part
// is stored, and each part as sent must hash as that read's range. A file hashed before the upload
// must have been sent as hashed. Any difference fails the upload naming the file, before completion.
import { createHash, hash, type Hash } from 'node:crypto'
import { fstatSync, type Stats } from 'node:fs'
import pLimit from 'p-limit'
import type { PresignedRequestList } from '../../api/presigned.ts'
import { closeFile, lstatFile, readAt, type OpenFile } from '../fd.ts'
import { isScannedFile, openScanned, type ArtifactFile } from '../files.ts'
import { isBytesFile, type Part, type UploadFile, type UploadPlan } from './plan.ts'

export interface SentDigests {
  md5: string
  sha256: string
}

export function digestsOf(bytes: Buffer): SentDigests {
  return { md5: hash('md5', bytes), sha256: hash('sha256', bytes) }
}

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
  /** By file index; undefined: not hashed first. */
  expected: readonly (string | undefined)[] | undefined
  open: OpenFile | undefined
  /** A file sent in parts was found changed. */
  failed: (error: Error) => void
}

export class Integrity {
  readonly digests: string[]
  readonly #options: IntegrityOptions
  /** By request index. */
  readonly #sent: string[] = []
  /** Parts not stored yet, by file index. */
  readonly #left: number[]
  readonly #checks: Promise<void>[] = []
  readonly #limit = pLimit(2)

  constructor(options: IntegrityOptions) {
    this.#options = options
    this.digests = new Array<string>(options.files.length)
    this.#left = [...options.plan.partCount]
  }

  stored(part: Part, sent: SentDigests): void {
    const f = part.fileIndex
    if (part.of === 1) return this.#prove(f, sent.sha256)
    this.#sent[part.index] = sent.sha256
    if (--this.#left[f]! > 0) return
    const check = this.#limit(() => this.#checkParts(f))
    check.catch((error: unknown) => this.#options.failed(error as Error))
    this.#checks.push(check)
  }

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

  /** A file no request asked for is empty (planUpload checked): checked as scanned. */
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

/** Given a synchronous fstat of the descriptor read; a change of the bytes alone is the digests' to catch. */
export function assertUnchanged(file: ArtifactFile, now: Stats): void {
  if (now.size !== file.size || now.mtimeMs !== file.mtimeMs) {
    throw changed(file, `its size or time is not the scan's (size ${file.size} -> ${now.size})`)
  }
}
