// The one place the upload's integrity is kept: every SHA-256 published, and the MD5 the ETag is
// checked against, come from the bytes as sent. A file in parts is read once more after its last part
// is stored, and each part as sent must hash as that read's range. A file hashed before the upload
// must have been sent as hashed. Any difference fails the upload naming the file, before completion.
import { createHash, hash } from 'node:crypto'
import type { Stats } from 'node:fs'
import pLimit from 'p-limit'
import type { PresignedRequestList } from '../../api/presigned.ts'
import { lstatFile, type OpenFile } from '../fd.ts'
import { isScannedFile, READ_BUFFER, readScanned, type ArtifactFile } from '../files.ts'
import { isBytesFile, type Part, type UploadFile, type UploadPlan } from './plan.ts'

export interface SentDigests {
  md5: string
  sha256: string
}

export function digestsOf(bytes: Buffer): SentDigests {
  return { md5: hash('md5', bytes), sha256: hash('sha256', bytes) }
}

/** The digests of a body's chunks as sent, asked for once every byte was. */
export function sentHash(): { sent(chunk: Buffer): void; digests(): SentDigests } {
  const md5 = createHash('md5')
  const sha256 = createHash('sha256')
  let digests: SentDigests | undefined
  return {
    sent: (chunk) => {
      md5.update(chunk)
      sha256.update(chunk)
    },
    digests: () => (digests ??= { md5: md5.digest('hex'), sha256: sha256.digest('hex') }),
  }
}

export interface IntegrityOptions {
  files: readonly UploadFile[]
  plan: UploadPlan
  requests: PresignedRequestList
  /** By file index; undefined: not hashed first. */
  expected?: readonly (string | undefined)[]
  open?: OpenFile
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
    const end = (r: number) => requests.byteOffset(list[r]!) + requests.contentLength(list[r]!)
    const whole = createHash('sha256')
    let range = createHash('sha256')
    let r = 0
    const closeRanges = (position: number) => {
      for (; r < list.length && end(r) <= position; r++) {
        if (range.digest('hex') !== this.#sent[list[r]!]) {
          throw changed(file, `part ${r + 1}/${list.length} as sent is not what the file holds now`)
        }
        range = createHash('sha256')
      }
    }
    const hashChunk = (chunk: Buffer, offset: number) => {
      whole.update(chunk)
      for (let at = 0; at < chunk.length;) {
        closeRanges(offset + at)
        const length = Math.min(chunk.length - at, end(r) - offset - at)
        range.update(chunk.subarray(at, at + length))
        at += length
      }
    }
    if (isBytesFile(file)) hashChunk(file.bytes, 0)
    else {
      const read = await readScanned(
        file,
        Buffer.allocUnsafe(READ_BUFFER),
        this.#options.open,
        (chunk, offset) => hashChunk(chunk.subarray(0, Math.max(0, file.size - offset)), offset),
      )
      if (read.size < file.size) throw shrank(file)
      assertUnchanged(file, read.stats)
    }
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
