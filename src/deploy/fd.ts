// File reads for the scan, the hashing and the upload, on plain file descriptors and fs's callbacks:
// a FileHandle of fs/promises costs several times the CPU per small file, and a web build is mostly
// small files (BENCHMARKS.md).
import { close, closeSync, lstat, open, read, readdirSync, readFileSync, type Stats } from 'node:fs'
import { promisify } from 'node:util'

export const lstatFile: (path: string) => Promise<Stats> = promisify(lstat)

/** fs.open's, or a test's that fails as a full descriptor table would. */
export type OpenFile = (path: string, flags: number) => Promise<number>

export const openFile: OpenFile = promisify(open)

export const closeFile: (fd: number) => Promise<void> = promisify(close)

/** Not promisify(read): it resolves with a new object per read. */
export function readAt(
  fd: number,
  buffer: Buffer,
  offset: number,
  length: number,
  position: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    read(fd, buffer, offset, length, position, (error, bytesRead) =>
      error ? reject(error) : resolve(bytesRead),
    )
  })
}

/** A file only read: closed on this thread, no round trip through the pool; its error is ignored. */
export function closeNow(fd: number): void {
  try {
    closeSync(fd)
  } catch {
    // The descriptor is gone either way.
  }
}

/** `ulimit -n` less the descriptors held; Node has no getrlimit, so only Linux's /proc tells. */
export function descriptorsFree(): number | undefined {
  try {
    const limit = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]
    if (limit === undefined) return undefined
    return Number(limit) - readdirSync('/proc/self/fd').length
  } catch {
    return undefined
  }
}

/** A PUT's file and socket. */
const DESCRIPTORS_PER_PUT = 2
/** The API's connections, the readers of files in parts, the runtime's own. */
const DESCRIPTORS_SPARED = 16

/** A low open-files limit is lived within from the start, not found out by EMFILE. */
export function uploadsWithin(wanted: number, free: number | undefined): number {
  if (free === undefined) return wanted
  return Math.max(1, Math.min(wanted, Math.floor((free - DESCRIPTORS_SPARED) / DESCRIPTORS_PER_PUT)))
}
