// File reads for the scan, the hashing and the upload, on plain file descriptors and fs's callbacks:
// a FileHandle of fs/promises costs several times the CPU per small file, and a web build is mostly
// small files (BENCHMARKS.md).
import { close, closeSync, lstat, open, read, readdirSync, readFileSync, type Stats } from 'node:fs'

/** A file's own metadata, a link's and not its target's. */
export function lstatFile(path: string): Promise<Stats> {
  return new Promise((resolve, reject) => {
    lstat(path, (error, stats) => (error ? reject(error) : resolve(stats)))
  })
}

/** How a file is opened: fs.open's, or a test's that fails as a full descriptor table or a refusal would. */
export type OpenFile = (path: string, flags: number) => Promise<number>

export const openFile: OpenFile = (path, flags) =>
  new Promise((resolve, reject) => {
    open(path, flags, (error, fd) => (error ? reject(error) : resolve(fd)))
  })

/** Reads up to `length` bytes at `position` into `buffer` from `offset`; resolves to the count read. */
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

export function closeFile(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    close(fd, (error) => (error ? reject(error) : resolve()))
  })
}

/**
 * Closes a file that was only read, at once and on this thread: such a close is fast, where an
 * asynchronous one costs a round trip through the thread pool per file that nothing needs to wait
 * for. Its error is ignored (a file only read has nothing left to lose).
 */
export function closeNow(fd: number): void {
  try {
    closeSync(fd)
  } catch {
    // Nothing to do: the descriptor is gone either way.
  }
}

/**
 * How many more files this process may open: its open-files limit (the soft one, `ulimit -n`) less
 * the descriptors it holds. Node has no getrlimit: Linux says both in /proc; elsewhere (macOS,
 * Windows) it is unknown, and a full table is waited out as the upload goes (see outcome.ts).
 */
export function descriptorsFree(): number | undefined {
  try {
    const limit = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]
    if (limit === undefined) return undefined
    return Number(limit) - readdirSync('/proc/self/fd').length
  } catch {
    return undefined
  }
}

/** What one PUT holds open: its file and its connection's socket. */
const DESCRIPTORS_PER_PUT = 2
/** Left for everything else: the API's connections, the readers hashing files sent in parts, the runtime's own. */
const DESCRIPTORS_SPARED = 16

/**
 * The uploads at a time that `free` descriptors allow (undefined: unknown, `wanted` as it is), at
 * least one: so that a low open-files limit is lived within from the start, not found out by EMFILE
 * once the site exists.
 */
export function uploadsWithin(wanted: number, free: number | undefined): number {
  if (free === undefined) return wanted
  return Math.max(1, Math.min(wanted, Math.floor((free - DESCRIPTORS_SPARED) / DESCRIPTORS_PER_PUT)))
}
