import type { PresignedRequestList } from '../../api/presigned.ts'
import type { ArtifactFile } from '../files.ts'

/** Sent from memory. */
export interface BytesFile {
  path: string
  size: number
  contentType?: string
  bytes: Buffer
}

export type UploadFile = ArtifactFile | BytesFile

export function isBytesFile(file: UploadFile): file is BytesFile {
  return 'bytes' in file
}

export interface Part {
  /** The request's index. */
  index: number
  file: UploadFile
  fileIndex: number
  /** 1-based, within the file. */
  number: number
  of: number
}

export interface UploadPlan {
  /** By request index. */
  parts: Part[]
  /** By file index: 0 when no request asks for it (an empty file may not be). */
  partCount: number[]
  /** The requests of each file in more than one part, by offset. */
  inParts: Map<number, number[]>
}

/** Checks that the requests of each file cover each of its bytes exactly once. */
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
  const inParts = new Map<number, number[]>()
  for (const part of parts) {
    part.of = partCount[part.fileIndex]!
    if (part.of > 1) {
      if (!inParts.has(part.fileIndex)) inParts.set(part.fileIndex, [])
      inParts.get(part.fileIndex)!.push(part.index)
    } else if (requests.contentLength(part.index) !== part.file.size) {
      throw uncovered(part.file, requests.contentLength(part.index))
    }
  }
  files.forEach((file, f) => {
    if (partCount[f] === 0 && file.size !== 0) throw uncovered(file, 0)
  })
  for (const [f, list] of inParts) checkRanges(files[f]!, list, requests)
  return { parts, partCount, inParts }
}

const uncovered = (file: UploadFile, covered: number) =>
  new Error(`The service's upload requests for '${file.path}' cover ${covered} of its ${file.size} bytes`)

/** Ranges that merely add up to the size may overlap and leave a gap. */
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

/** Never by URL. */
export function describePart(part: Part): string {
  return part.of === 1
    ? `Upload of ${part.file.path}`
    : `Upload of ${part.file.path} part ${part.number}/${part.of}`
}
