// The one place the upload's integrity is proved: every SHA-256 published comes from the bytes as
// sent (put.ts hashes them as it sends them). A file in parts is read once more after its last part
// is stored, and each part as sent must hash as that read's range. A file hashed before the upload
// must have been sent as hashed. Any difference fails the upload naming the file, before completion.
import { createHash, hash } from 'node:crypto'
import { changed, readScanned, streamScanned, type OpenFile } from '../collect/read.ts'
import { isBytesFile, type Part, type UploadFile } from './parts.ts'

export interface IntegrityOptions {
  files: readonly UploadFile[]
  /** Each file's parts, by offset. */
  byFile: readonly Part[][]
  /** The SHA-256 a file had when hashed before the upload, by index: the bytes sent must have it. */
  expected?: readonly (string | undefined)[]
  open?: OpenFile
}

export function proveIntegrity({ files, byFile, expected, open }: IntegrityOptions) {
  const digests = new Array<string>(files.length)
  /** The SHA-256 of each part as sent. */
  const sent = new Map<Part, string>()
  const prove = (f: number, sha256: string) => {
    if (expected?.[f] !== undefined && expected[f] !== sha256)
      throw changed(files[f]!, 'the bytes sent are not the ones hashed before the upload')
    digests[f] = sha256
  }
  const checkParts = async (f: number, parts: readonly Part[]) => {
    const file = files[f]!
    const whole = createHash('sha256')
    for (const part of parts) {
      const range = createHash('sha256')
      const { byte_offset: offset, content_length: length } = part.request
      const chunks = isBytesFile(file)
        ? [file.bytes.subarray(offset, offset + length)]
        : streamScanned(file, offset, length, open)
      for await (const chunk of chunks) {
        whole.update(chunk)
        range.update(chunk)
      }
      if (range.digest('hex') !== sent.get(part))
        throw changed(file, `part ${part.number}/${part.of} as sent is not what the file holds now`)
    }
    prove(f, whole.digest('hex'))
  }
  return {
    /** A part the store has: a file in one part is proved here, one in parts once all are stored. */
    async stored(part: Part, sha256: string): Promise<void> {
      if (part.of === 1) return prove(part.fileIndex, sha256)
      sent.set(part, sha256)
      const parts = byFile[part.fileIndex]!
      if (parts.every((p) => sent.has(p))) await checkParts(part.fileIndex, parts)
    },
    /** Each file's SHA-256, once every part was stored; an empty file no request asked for is read as any. */
    finish(): string[] {
      for (const [f, parts] of byFile.entries()) {
        if (parts.length) continue
        const file = files[f]!
        // Read as any file is: still the scanned one, unchanged.
        if (!isBytesFile(file)) readScanned(file, 0, 0, open)
        prove(f, hash('sha256', ''))
      }
      return digests
    },
  }
}
