// The one place a file of the site is opened and read, for the scan, the hashing, the engine's look
// and the upload: never through a link (O_NOFOLLOW, or an lstat first where the platform has none),
// never waiting for a writer (O_NONBLOCK), and after the scan only the file the scan opened (same
// device and inode), unchanged (same size and time) once read.
//
// Opening, a file's status and a small file's bytes are taken synchronously: a trip through the
// thread pool costs more than the call itself (BENCHMARKS.md). Large files are read a buffer at a time
// through it, between the sends.
import { messageOf } from '../../common/format.ts'
import { closeSync, constants, fstatSync, lstatSync, openSync, read, readSync, type Stats } from 'node:fs'
import { promisify } from 'node:util'
import { isOutOfDescriptors } from '../../common/network.ts'
import type { ArtifactFile } from './files.ts'

const NO_FOLLOW = constants.O_NOFOLLOW ?? 0
const READ_FLAGS = constants.O_RDONLY | NO_FOLLOW | (constants.O_NONBLOCK ?? 0)
export const READ_BUFFER = 256 * 1024

/** fs.openSync's, or a test's that fails as a full descriptor table would. */
export type OpenFile = (path: string, flags: number) => number

export const openFile: OpenFile = openSync

const readAt = promisify(read)

function openUnfollowed(file: string, openWith: OpenFile = openFile): number {
  if (NO_FOLLOW === 0 && lstatSync(file).isSymbolicLink()) {
    throw Object.assign(new Error(`ELOOP: a link is at its path, not followed, open '${file}'`), {
      code: 'ELOOP',
    })
  }
  return openWith(file, READ_FLAGS)
}

/** The scan's look at a file: opened as it will be read, and what it is. */
export function statOpened(file: string, openWith?: OpenFile): Stats {
  const fd = openUnfollowed(file, openWith)
  try {
    return fstatSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** `length` bytes (a small part's) of the scanned file from `offset`, checked to be that file, unchanged, once read. */
export function readScanned(
  file: ArtifactFile,
  offset = 0,
  length = file.size - offset,
  openWith?: OpenFile,
): Buffer {
  const fd = openScanned(file, openWith)
  try {
    const bytes = Buffer.allocUnsafe(length)
    for (let done = 0; done < length;) {
      const bytesRead = readSync(fd, bytes, done, length - done, offset + done)
      if (bytesRead === 0) throw changed(file, 'it is shorter than when it was scanned')
      done += bytesRead
    }
    assertUnchanged(file, fstatSync(fd))
    return bytes
  } finally {
    closeSync(fd)
  }
}

/** The scanned file's bytes from `offset`, a buffer at a time; it is checked unchanged before the last. */
export async function* streamScanned(
  file: ArtifactFile,
  offset = 0,
  length = file.size - offset,
  openWith?: OpenFile,
): AsyncGenerator<Buffer> {
  const fd = openScanned(file, openWith)
  try {
    // Before a byte is handed on: a stream's first chunks are sent before its last is read.
    assertScannedFile(file, fstatSync(fd))
    for (let done = 0; done < length;) {
      const buffer = Buffer.allocUnsafe(Math.min(READ_BUFFER, length - done))
      const { bytesRead } = await readAt(fd, buffer, 0, buffer.length, offset + done)
      if (bytesRead === 0) throw changed(file, 'it is shorter than when it was scanned')
      done += bytesRead
      if (done === length) assertUnchanged(file, fstatSync(fd))
      yield bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead)
    }
    if (length === 0) assertUnchanged(file, fstatSync(fd))
  } finally {
    closeSync(fd)
  }
}

/** Out of descriptors is thrown as it is, for the caller to wait and retry. */
function openScanned(file: ArtifactFile, openWith?: OpenFile): number {
  try {
    return openUnfollowed(file.absolutePath, openWith)
  } catch (error) {
    if (isOutOfDescriptors(error)) throw error
    const why = openFailure(error, 'after it was scanned')
    throw new Error(`${file.path} can no longer be opened (${why})`, { cause: error })
  }
}

export function changed(file: Pick<ArtifactFile, 'path'>, why: string): Error {
  return new Error(`${file.path} changed after it was scanned: ${why}`)
}

/** The file the scan opened (device and inode), whatever opened it since. */
function assertScannedFile(file: ArtifactFile, now: Stats): void {
  if (!now.isFile() || now.ino !== file.ino || now.dev !== file.dev) {
    throw new Error(
      `${file.path} was replaced after it was scanned: ${now.isFile() ? 'another file' : `something else (${kindOf(now)})`} is at its path now`,
    )
  }
}

/** The scanned file, its size and time as the scan saw them. */
function assertUnchanged(file: ArtifactFile, now: Stats): void {
  assertScannedFile(file, now)
  if (now.size !== file.size || now.mtimeMs !== file.mtimeMs) {
    throw changed(file, `its size or time is not the scan's (size ${file.size} -> ${now.size})`)
  }
}

export function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO'
  if (stats.isSocket()) return 'a socket'
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device'
  return 'not a regular file'
}

/** What to do when out of file descriptors. */
export function descriptorLimitRemedy(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') return 'close the programs holding many files open (Windows has no ulimit)'
  if (platform === 'darwin') return 'raise the limit (ulimit -n, up to launchctl limit maxfiles)'
  return 'raise the limit (ulimit -n)'
}

/** Why a file could not be opened, and the change found `when` it happened. */
export function openFailure(error: unknown, when = 'while the files were scanned'): string {
  const code = (error as { code?: unknown }).code
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return `${code}: this process may not read it`
    case 'ENOENT':
    case 'ENOTDIR':
      return `${code}: removed ${when}`
    case 'ELOOP':
      return `${code}: it became a link ${when}; the link is not followed`
    case 'EMFILE':
    case 'ENFILE':
      return `${code}: out of file descriptors; ${descriptorLimitRemedy()}`
  }
  const message = messageOf(error)
  return typeof code === 'string' && !message.startsWith(code) ? `${code}: ${message}` : message
}
