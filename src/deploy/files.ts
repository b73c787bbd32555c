import { createHash } from 'node:crypto'
import { closeSync, fstatSync, open, openSync, type Stats } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import mime from 'mime-types'
import type { FileDescriptor } from '../api/types.ts'
import { isOutOfDescriptors } from '../common/network.ts'
import { closeFile, lstatFile, openFile, readAt, type OpenFile } from './fd.ts'
import { descriptorLimitRemedy, NO_FOLLOW, readFlags } from './platform.ts'
import { forEachLimited } from '../common/limit.ts'

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

export const READ_BUFFER = 256 * 1024

/** Hashed `workers` at a time into buffers from a free list, so memory stays flat. */
export async function hashArtifacts(
  files: readonly ArtifactFile[],
  workers = 8,
  openWith?: OpenFile,
): Promise<string[]> {
  const digests = new Array<string>(files.length)
  const free: Buffer[] = []
  await forEachLimited(files, workers, async (file, i) => {
    const buffer = free.pop() ?? Buffer.allocUnsafe(READ_BUFFER)
    try {
      const hash = createHash('sha256')
      const { size, stats } = await readScanned(file, buffer, openWith, (chunk) => hash.update(chunk))
      if (size !== file.size) {
        throw new Error(`${file.path} changed while it was hashed (size ${file.size} -> ${stats.size})`)
      }
      digests[i] = hash.digest('hex')
    } finally {
      free.push(buffer)
    }
  })
  return digests
}

export function buildManifest(files: readonly ArtifactFile[], sha256: readonly string[]): Manifest {
  const sorted = files
    .map((file, i): ManifestFile => ({ ...file, sha256: sha256[i]! }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
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

/** Without absolute paths, a batch of lines at a time: one string of the whole was a big deploy's peak. */
export async function writeManifest(manifest: Manifest, file: string): Promise<string> {
  await writeFile(file, manifestText(manifest))
  return file
}

const MANIFEST_BATCH = 500

function* manifestText({ digest, fileCount, totalBytes, files }: Manifest): Generator<string> {
  yield `${JSON.stringify({ digest, fileCount, totalBytes }, null, 2).slice(0, -2)},\n  "files": [`
  let lines = ''
  for (const [i, { path: p, size, sha256, contentType }] of files.entries()) {
    lines += `${i ? ',' : ''}\n    ${JSON.stringify({ path: p, size, sha256, contentType })}`
    if ((i + 1) % MANIFEST_BATCH === 0) {
      yield lines
      lines = ''
    }
  }
  yield `${lines}${files.length ? '\n  ' : ''}]\n}\n`
}

const contentTypes = new Map<string, string | undefined>()

/** One string per extension, however many files share it (mime-types builds a new one each call). */
export function contentTypeOf(file: string): string | undefined {
  const extension = path.extname(file).toLowerCase()
  if (!contentTypes.has(extension)) contentTypes.set(extension, mime.contentType(extension) || undefined)
  return contentTypes.get(extension)
}

/** The close is not waited for: a read-only descriptor has nothing to flush. */
export async function statOpened(
  file: string,
  openWith: OpenFile | undefined,
  noFollow: number,
): Promise<Stats> {
  const { fd, seen } = await openUnfollowed(file, openWith, noFollow)
  try {
    const stats = fstatSync(fd)
    if (seen && (stats.dev !== seen.dev || stats.ino !== seen.ino)) throw becameLink(file)
    return stats
  } finally {
    closeFile(fd).catch(() => {})
  }
}

/** Without O_NOFOLLOW (noFollow 0, Windows) an lstat first refuses a link; what it saw is returned to compare. */
async function openUnfollowed(
  file: string,
  openWith: OpenFile | undefined,
  noFollow: number,
): Promise<{ fd: number; seen: Stats | undefined }> {
  const seen = noFollow === 0 ? await lstatFile(file) : undefined
  if (seen?.isSymbolicLink()) throw becameLink(file)
  return { fd: await (openWith ?? openFile)(file, readFlags(noFollow)), seen }
}

const becameLink = (file: string) =>
  Object.assign(new Error(`ELOOP: a link is at its path, not followed, open '${file}'`), {
    code: 'ELOOP',
    syscall: 'open',
    path: file,
  })

/** statOpened without the thread pool, on a local file system. */
export function statOpenedSync(file: string, noFollow: number): Stats {
  const fd = openSync(file, readFlags(noFollow))
  try {
    return fstatSync(fd)
  } finally {
    closeSync(fd)
  }
}

export function openFailure(error: unknown): string {
  const code = (error as { code?: unknown }).code
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return `${code}: this process may not read it`
    case 'ENOENT':
    case 'ENOTDIR':
      return `${code}: removed while the files were scanned`
    case 'ELOOP':
      return `${code}: it became a link while the files were scanned`
    case 'EMFILE':
    case 'ENFILE':
      return `${code}: out of file descriptors; ${descriptorLimitRemedy()}`
  }
  const message = error instanceof Error ? error.message : String(error)
  return typeof code === 'string' && !message.startsWith(code) ? `${code}: ${message}` : message
}

export function isScannedFile(file: ArtifactFile, stats: Stats): boolean {
  return stats.isFile() && stats.ino === file.ino && stats.dev === file.dev
}

/**
 * Opens only the file the scan opened (same device and inode), never a link put at its path since;
 * else fails naming it. EMFILE and ENFILE are thrown as they are, for the caller to wait and retry.
 */
export async function openScanned(
  file: ArtifactFile,
  openWith?: OpenFile,
  noFollow: number = NO_FOLLOW,
): Promise<number> {
  const fd = await openAtScannedPath(file, openWith, noFollow)
  try {
    assertScannedFile(file, fstatSync(fd))
  } catch (error) {
    closeSync(fd)
    throw error
  }
  return fd
}

/** openScanned without its fstat: for a reader that checks identity (assertScannedFile) after its read. */
export async function openAtScannedPath(
  file: ArtifactFile,
  openWith?: OpenFile,
  noFollow: number = NO_FOLLOW,
): Promise<number> {
  try {
    return (await openUnfollowed(file.absolutePath, openWith, noFollow)).fd
  } catch (error) {
    throw notReopened(file, error)
  }
}

/**
 * openAtScannedPath on fs's callback, with no promise where the platform refuses a link itself: the
 * upload reopens each small file this way (upload/body.ts).
 */
export function reopenScanned(
  file: ArtifactFile,
  openWith: OpenFile | undefined,
  done: (error: Error | null, fd: number) => void,
): void {
  if (openWith || NO_FOLLOW === 0) {
    openAtScannedPath(file, openWith).then(
      (fd) => done(null, fd),
      (error: unknown) => done(error as Error, -1),
    )
  } else
    open(file.absolutePath, readFlags(NO_FOLLOW), (error, fd) => done(error && notReopened(file, error), fd))
}

/** Why a scanned file did not open again; out of descriptors as it is, for the caller to wait and retry. */
function notReopened(file: ArtifactFile, error: unknown): Error {
  if (isOutOfDescriptors(error)) return error as Error
  const code = (error as { code?: unknown }).code
  const what =
    code === 'ELOOP'
      ? 'was replaced by a link after it was scanned; the link is not followed'
      : code === 'ENOENT' || code === 'ENOTDIR'
        ? 'was removed after it was scanned'
        : 'can no longer be opened'
  return new Error(`${file.path} ${what} (${openFailure(error)})`, { cause: error })
}

export function assertScannedFile(file: ArtifactFile, stats: Stats): void {
  if (!isScannedFile(file, stats)) {
    throw new Error(
      `${file.path} was replaced after it was scanned: ${stats.isFile() ? 'another file' : `something else (${kindOf(stats)})`} is at its path now`,
    )
  }
}

export function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO'
  if (stats.isSocket()) return 'a socket'
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device'
  return 'not a regular file'
}

/**
 * The scanned file read from its start, each chunk handed on as read. A short read at the scanned size
 * ends the file without one more read; a file that grew is read one buffer past its scanned size.
 */
export async function readScanned(
  file: ArtifactFile,
  buffer: Buffer,
  openWith: OpenFile | undefined,
  chunk: (bytes: Buffer, offset: number) => void,
): Promise<{ size: number; stats: Stats }> {
  const fd = await openScanned(file, openWith)
  try {
    let size = 0
    for (;;) {
      const bytesRead = await readAt(fd, buffer, 0, buffer.length, size)
      if (bytesRead === 0) break
      chunk(buffer.subarray(0, bytesRead), size)
      size += bytesRead
      if (size > file.size || (bytesRead < buffer.length && size === file.size)) break
    }
    return { size, stats: fstatSync(fd) }
  } finally {
    await closeFile(fd)
  }
}
