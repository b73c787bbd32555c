// A site's files as the deploy knows them, and the manifest of their digests.
import { createHash } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import mime from 'mime-types'
import type { FileDescriptor } from '../../api/types.ts'

export interface ArtifactFile {
  /** Path relative to the site root, `/` separators: the path the service knows the file by. */
  path: string
  /** The file, or for a link inside path, the real path of its target; opened without following a link. */
  absolutePath: string
  size: number
  mtimeMs: number
  /** The file the scan opened: hashing and upload read only that one. */
  dev: number
  ino: number
  /** With charset for text types; absent when the extension is unknown. */
  contentType?: string
}

export interface ManifestFile extends ArtifactFile {
  sha256: string
}

export interface Manifest {
  files: ManifestFile[]
  fileCount: number
  totalBytes: number
  /**
   * `sha256:` + SHA-256 over one JSON line `[path,size,sha256]` per file, sorted by path; a content type
   * not the extension's ends its line, so an unchanged build served otherwise is a new site.
   */
  digest: string
}

export const byPath = (a: { path: string }, b: { path: string }): number =>
  a.path < b.path ? -1 : a.path > b.path ? 1 : 0

export function buildManifest(files: readonly ArtifactFile[], sha256: readonly string[]): Manifest {
  const sorted = files.map((file, i): ManifestFile => ({ ...file, sha256: sha256[i]! })).sort(byPath)
  const digest = createHash('sha256')
  for (const f of sorted) {
    const line = [f.path, f.size, f.sha256]
    if (f.contentType !== contentTypeOf(f.path)) line.push(f.contentType ?? '')
    digest.update(JSON.stringify(line) + '\n')
  }
  return {
    files: sorted,
    fileCount: sorted.length,
    totalBytes: sorted.reduce((sum, f) => sum + f.size, 0),
    digest: `sha256:${digest.digest('hex')}`,
  }
}

export function fileDescriptors(
  files: ReadonlyArray<Pick<ArtifactFile, 'path' | 'size' | 'contentType'>>,
): FileDescriptor[] {
  return files.map((f) => ({
    path: f.path,
    content_length: f.size,
    ...(f.contentType ? { content_type: f.contentType } : {}),
  }))
}

/** Without absolute paths: a file a line. */
export async function writeManifest({ digest, fileCount, totalBytes, files }: Manifest, file: string) {
  const head = JSON.stringify({ digest, fileCount, totalBytes }, null, 2).slice(0, -2)
  const lines = files.map(({ path: p, size, sha256, contentType }) =>
    JSON.stringify({ path: p, size, sha256, contentType }),
  )
  const list = lines.length ? `\n    ${lines.join(',\n    ')}\n  ` : ''
  await writeFile(file, `${head},\n  "files": [${list}]\n}\n`)
  return file
}

const contentTypes = new Map<string, string | undefined>()

/** One string per extension, however many files share it (mime-types builds a new one each call). */
export function contentTypeOf(file: string): string | undefined {
  const extension = path.extname(file).toLowerCase()
  if (!contentTypes.has(extension)) contentTypes.set(extension, mime.contentType(extension) || undefined)
  return contentTypes.get(extension)
}
