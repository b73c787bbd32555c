// File reads for the upload and the hashing, through fs's callback API on plain file descriptors. A
// FileHandle of fs/promises costs about three times the CPU per small file (3,000 files of 1 to
// 32 KiB opened, read and closed 128 at a time: 164 ms of CPU with FileHandle, 57 ms with these),
// and a web build is mostly small files.
import { close, open, read } from 'node:fs'

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
