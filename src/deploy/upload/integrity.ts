// The one place the upload's integrity is proved: every SHA-256 published comes from the bytes as
// sent (put.ts hashes them as it sends them), and a retry must send the bytes sent first. A file in
// parts is read once more after its last part is stored, and each part as sent must hash as that
// read's range. A file hashed before the upload must have been sent as hashed. Any difference fails
// the upload naming the file, before completion.
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

export type Integrity = ReturnType<typeof proveIntegrity>

export function proveIntegrity({ files, byFile, expected, open }: IntegrityOptions) {
  const digests = new Array<string>(files.length)
  /** The SHA-256 of each part of a file in parts as first sent. */
  const sent = new Map<Part, string>()
  const stored = new Set<Part>()
  let unproved = files.length
  const proved = Promise.withResolvers<string[]>()
  const prove = (f: number, sha256: string) => {
    if (expected?.[f] !== undefined && expected[f] !== sha256)
      throw changed(files[f]!, 'the bytes sent are not the ones hashed before the upload')
    digests[f] = sha256
    if (--unproved === 0) proved.resolve(digests)
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
  for (const [f, parts] of byFile.entries()) {
    if (parts.length) continue
    // An empty file no request asks for is read as any file is: still the scanned one, unchanged.
    if (!isBytesFile(files[f]!)) readScanned(files[f]!, 0, 0, open)
    prove(f, hash('sha256', ''))
  }
  return {
    /** A part's bytes all sent: a file in one part is proved here. */
    sent: (part: Part, sha256: string): void => {
      const first = part.of === 1 ? digests[part.fileIndex] : sent.get(part)
      if (first !== undefined && first !== sha256)
        throw changed(part.file, 'the bytes sent again are not the ones sent first')
      if (part.of > 1) sent.set(part, sha256)
      else if (first === undefined) prove(part.fileIndex, sha256)
    },
    /** A part the store has: a file in parts is proved once all are stored. */
    async stored(part: Part): Promise<void> {
      if (part.of === 1) return
      stored.add(part)
      const parts = byFile[part.fileIndex]!
      if (parts.every((p) => stored.has(p))) await checkParts(part.fileIndex, parts)
    },
    /** Each file's SHA-256 once every file is proved (in one part: before its answer), or `signal`'s reason. */
    proved(signal: AbortSignal): Promise<string[]> {
      if (!unproved) return Promise.resolve(digests)
      signal.addEventListener('abort', () => proved.reject(signal.reason as Error), { once: true })
      return proved.promise
    },
  }
}
