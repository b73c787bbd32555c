// File reads for the scan, the hashing and the upload, on plain file descriptors. A FileHandle of
// fs/promises costs about three times the CPU per small file (3,000 files of 1 to 32 KiB opened, read
// and closed 128 at a time: 164 ms of CPU with FileHandle, 57 ms with fs's callbacks), and a web
// build is mostly small files.
//
// Calls on a file's inode (lstat, open, close) are made synchronously while they are fast. A build
// has just written the files, and the scan has just stat'ed them when they are opened, so their
// inodes are in the kernel's caches and each call takes microseconds, while a round trip through
// libuv's thread pool costs the main thread several times that in wake-ups (5,000 files of 1 to 32
// KiB: opens and closes made synchronously, 10% less CPU for the deploy and 0.92x the time, the mixed
// site 0.96x; the scan of 20,000 files with lstat made synchronously, half the time and CPU). On a
// network file system or a cold disk each call may be a round trip of its own, which would stall
// every PUT in flight: once the median call of a window takes longer than SYNC_CALL_LIMIT_MS, every
// later one goes through the thread pool. Reads stay asynchronous: they move the file's bytes.
import { close, closeSync, lstatSync, open, openSync, read, type Stats } from 'node:fs'
import { lstat } from 'node:fs/promises'

/** What the median synchronous lstat, open or close of a window may take before they are given up. */
export const SYNC_CALL_LIMIT_MS = 0.1
/**
 * Calls per window. The median, not the mean: a young-generation collection that starts inside a
 * call, or a thread descheduled by a busy machine, makes one call take milliseconds (the mean of 64
 * local calls reached 185 microseconds that way; their median stayed under 8).
 */
export const SYNC_CALL_WINDOW = 64

/**
 * Runs calls synchronously while the median call of each window of calls stays under the limit;
 * after one window over it, `synchronous` is false for good.
 */
export class SyncWhileFast {
  #synchronous = true
  #calls = 0
  readonly #durations: Float64Array
  readonly #limitMs: number
  readonly #now: () => number

  constructor(limitMs: number, window: number, now: () => number = () => performance.now()) {
    this.#limitMs = limitMs
    this.#durations = new Float64Array(window)
    this.#now = now
  }

  get synchronous(): boolean {
    return this.#synchronous
  }

  /** Runs `call` and counts the time it took, thrown or not. */
  time<T>(call: () => T): T {
    const started = this.#now()
    try {
      return call()
    } finally {
      this.#durations[this.#calls++] = this.#now() - started
      if (this.#calls === this.#durations.length) {
        this.#durations.sort()
        if (this.#durations[this.#calls >> 1]! > this.#limitMs) this.#synchronous = false
        this.#calls = 0
      }
    }
  }
}

/** The process's lstats, opens and closes of the site's files. */
export const inodeCalls = new SyncWhileFast(SYNC_CALL_LIMIT_MS, SYNC_CALL_WINDOW)

/** A file's own metadata, a link's and not its target's. */
export function lstatFile(path: string): Promise<Stats> {
  if (inodeCalls.synchronous) return timed(() => lstatSync(path))
  return lstat(path)
}

export function openForReading(path: string): Promise<number> {
  if (inodeCalls.synchronous) return timed(() => openSync(path, 'r'))
  return new Promise((resolve, reject) => {
    open(path, 'r', (error, fd) => (error ? reject(error) : resolve(fd)))
  })
}

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
  if (inodeCalls.synchronous) return timed(() => closeSync(fd))
  return new Promise((resolve, reject) => {
    close(fd, (error) => (error ? reject(error) : resolve()))
  })
}

/** A synchronous call timed by inodeCalls: its value, or what it threw as a rejection. */
function timed<T>(call: () => T): Promise<T> {
  // What the executor throws rejects the promise.
  return new Promise((resolve) => resolve(inodeCalls.time(call)))
}
