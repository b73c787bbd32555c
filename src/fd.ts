// File reads for the upload and the hashing, on plain file descriptors. A FileHandle of fs/promises
// costs about three times the CPU per small file (3,000 files of 1 to 32 KiB opened, read and closed
// 128 at a time: 164 ms of CPU with FileHandle, 57 ms with fs's callbacks), and a web build is mostly
// small files.
//
// Opening and closing are made synchronously while they are fast. The scan has just stat'ed every
// file, so its inode is in the kernel's caches and open(2) or close(2) takes microseconds, while a
// round trip through libuv's thread pool costs the main thread several times that in wake-ups
// (5,000 files of 1 to 32 KiB: 10% less CPU for the deploy, 0.92x the time; the mixed site 0.96x). On a
// network file system or a cold disk each call may be a round trip of its own, which would stall
// every PUT in flight: once the median call of a window takes longer than SYNC_CALL_LIMIT_MS, every
// later one goes through the thread pool. Reads stay asynchronous: they move the file's bytes.
import { close, closeSync, open, openSync, read } from 'node:fs'

/** What the median synchronous open or close of a window may take before they are given up. */
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

/** The process's opens and closes of files to read. */
export const openAndClose = new SyncWhileFast(SYNC_CALL_LIMIT_MS, SYNC_CALL_WINDOW)

export function openForReading(path: string): Promise<number> {
  if (openAndClose.synchronous) return timed(() => openSync(path, 'r'))
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
  if (openAndClose.synchronous) return timed(() => closeSync(fd))
  return new Promise((resolve, reject) => {
    close(fd, (error) => (error ? reject(error) : resolve()))
  })
}

/** A synchronous call timed by openAndClose: its value, or what it threw as a rejection. */
function timed<T>(call: () => T): Promise<T> {
  // What the executor throws rejects the promise.
  return new Promise((resolve) => resolve(openAndClose.time(call)))
}
