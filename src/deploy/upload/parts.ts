// The service's presigned requests matched to the files: each file's bytes covered exactly once.
import type { PresignedRequest } from '../../api/types.ts'
import type { ArtifactFile } from '../collect/files.ts'

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
  request: PresignedRequest
  file: UploadFile
  fileIndex: number
  /** 1-based, within the file. */
  number: number
  of: number
}

/** The parts in the order asked for, and each file's, by offset (none: an empty file not asked for). */
export function planParts(
  files: readonly UploadFile[],
  requests: readonly PresignedRequest[],
): { parts: Part[]; byFile: Part[][] } {
  const index = new Map(files.map((f, i) => [f.path, i]))
  const byFile: Part[][] = files.map(() => [])
  const parts = requests.map((request): Part => {
    const fileIndex = index.get(request.path)
    if (fileIndex === undefined)
      throw new Error(`The service asked for '${request.path}', which is not a file of this site`)
    const file = files[fileIndex]!
    const { byte_offset: offset, content_length: length } = request
    if (offset < 0 || length < 0 || offset + length > file.size)
      throw new Error(
        `The service asked for bytes ${offset}+${length} of '${file.path}', which has ${file.size}`,
      )
    const part = { request, file, fileIndex, number: 0, of: 0 }
    byFile[fileIndex]!.push(part)
    return part
  })
  byFile.forEach((list, f) => checkCoverage(files[f]!, list))
  return { parts, byFile }
}

/** Ranges that merely add up to the size may overlap and leave a gap. */
function checkCoverage(file: UploadFile, list: Part[]): void {
  list.sort((a, b) => a.request.byte_offset - b.request.byte_offset)
  const range = (p: Part) => `${p.request.byte_offset}+${p.request.content_length}`
  const refused = `The service's upload requests for '${file.path}'`
  let end = 0
  for (const [i, part] of list.entries()) {
    Object.assign(part, { number: i + 1, of: list.length })
    const offset = part.request.byte_offset
    const previous = list[i - 1]
    if (offset < end) throw new Error(`${refused} overlap: bytes ${range(previous!)} and ${range(part)}`)
    if (offset > end)
      throw new Error(
        `${refused} leave a gap: bytes ${end}+${offset - end} ` +
          `(between ${previous ? `bytes ${range(previous)}` : 'its start'} and bytes ${range(part)})`,
      )
    end = offset + part.request.content_length
  }
  if (end !== file.size && (list.length || file.size))
    throw new Error(
      list.length > 1
        ? `${refused} leave a gap: bytes ${end}+${file.size - end} (after bytes ${range(list.at(-1)!)}, the last it asks for, to the end of its ${file.size} bytes)`
        : `${refused} cover ${end} of its ${file.size} bytes`,
    )
}

/** Never by URL (a credential). */
export function describePart(part: Part): string {
  return `Upload of ${part.file.path}${part.of === 1 ? '' : ` part ${part.number}/${part.of}`}`
}
