// File reads for the scan, the hashing and the upload, on plain file descriptors and fs's callbacks:
// a FileHandle of fs/promises costs several times the CPU per small file, and a web build is mostly
// small files (BENCHMARKS.md).
import { close, lstat, open, read, type Stats } from 'node:fs'

/** A file's own metadata, a link's and not its target's. */
export function lstatFile(path: string): Promise<Stats> {
  return new Promise((resolve, reject) => {
    lstat(path, (error, stats) => (error ? reject(error) : resolve(stats)))
  })
}

export function openForReading(path: string): Promise<number> {
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
  return new Promise((resolve, reject) => {
    close(fd, (error) => (error ? reject(error) : resolve()))
  })
}
