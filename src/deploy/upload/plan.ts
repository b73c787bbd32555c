import type { PresignedRequestList } from '../../api/presigned.ts'
import type { ArtifactFile } from '../files.ts'

/** A file whose bytes the caller holds: sent from memory, nothing read from disk. */
export interface BytesFile {
  path: string
  size: number
  contentType?: string
  bytes: Buffer
}

/** A file of the upload: one the scan found, or one in memory. */
export type UploadFile = ArtifactFile | BytesFile

export function isBytesFile(file: UploadFile): file is BytesFile {
  return 'bytes' in file
}

/** One presigned request paired with its file. */
export interface Part {
  /** Its request's index in the site's PresignedRequestList. */
  index: number
  file: UploadFile
  /** The file's index in UploadOptions.files. */
  fileIndex: number
  /** 1-based, within the file. */
  number: number
  of: number
}

export interface UploadPlan {
  /** One per request, by the request's index. */
  parts: Part[]
  /** The parts of each file, by its index: 0 when no request asks for it (an empty file may not be). */
  partCount: number[]
  /** The requests of each file sent in more than one part, in order of offset, by the file's index. */
  inParts: Map<number, number[]>
}

/**
 * Pairs each presigned request with its file and checks it asks for a range the file has, and that
 * the requests of each file cover each of its bytes exactly once: no gap, no overlap.
 */
export function planUpload(files: readonly UploadFile[], requests: PresignedRequestList): UploadPlan {
  const byPath = new Map(files.map((f, i) => [f.path, i]))
  const partCount = files.map(() => 0)
  const parts: Part[] = []
  for (let i = 0; i < requests.length; i++) {
    const path = requests.path(i)
    const f = byPath.get(path)
    if (f === undefined) throw new Error(`The service asked for '${path}', which is not a file of this site`)
    const file = files[f]!
    const offset = requests.byteOffset(i)
    const length = requests.contentLength(i)
    if (offset < 0 || offset + length > file.size) {
      throw new Error(`The service asked for bytes ${offset}+${length} of '${path}', which has ${file.size}`)
    }
    parts.push({ index: i, file, fileIndex: f, number: ++partCount[f]!, of: 0 })
  }
  // A file in one request (every file of a CDN site) is checked without a list of its own.
  const inParts = new Map<number, number[]>()
  for (const part of parts) {
    const count = partCount[part.fileIndex]!
    part.of = count
    if (count > 1) {
      const list = inParts.get(part.fileIndex)
      if (list) list.push(part.index)
      else inParts.set(part.fileIndex, [part.index])
    } else if (requests.contentLength(part.index) !== part.file.size) {
      throw new Error(
        `The service's upload requests for '${part.file.path}' cover ${requests.contentLength(part.index)} of its ${part.file.size} bytes`,
      )
    }
  }
  files.forEach((file, f) => {
    if (partCount[f] === 0 && file.size !== 0) {
      throw new Error(`The service's upload requests for '${file.path}' cover 0 of its ${file.size} bytes`)
    }
  })
  for (const [f, list] of inParts) checkRanges(files[f]!, list, requests)
  return { parts, partCount, inParts }
}

/**
 * A file's ranges, in order of offset, must follow one another from its first byte to its last:
 * ranges that merely add up to its size may overlap and leave a gap, and the site would be completed
 * with bytes that are not the file's.
 */
function checkRanges(file: UploadFile, list: number[], requests: PresignedRequestList): void {
  list.sort((a, b) => requests.byteOffset(a) - requests.byteOffset(b))
  const range = (i: number) => `${requests.byteOffset(i)}+${requests.contentLength(i)}`
  const refused = `The service's upload requests for '${file.path}'`
  let end = 0
  let previous: number | undefined
  for (const i of list) {
    const offset = requests.byteOffset(i)
    if (offset < end) throw new Error(`${refused} overlap: bytes ${range(previous!)} and ${range(i)}`)
    if (offset > end) {
      throw new Error(
        `${refused} leave a gap: bytes ${end}+${offset - end} ` +
          `(between ${previous === undefined ? 'its start' : `bytes ${range(previous)}`} and bytes ${range(i)})`,
      )
    }
    end = offset + requests.contentLength(i)
    previous = i
  }
  if (end !== file.size) {
    throw new Error(
      `${refused} leave a gap: bytes ${end}+${file.size - end} ` +
        `(after bytes ${range(previous!)}, the last it asks for, to the end of its ${file.size} bytes)`,
    )
  }
}

/** `Upload of <path>` (and `part n/N`): how a part is named in the log and its errors, never by URL. */
export function describePart(part: Part): string {
  return part.of === 1
    ? `Upload of ${part.file.path}`
    : `Upload of ${part.file.path} part ${part.number}/${part.of}`
}
