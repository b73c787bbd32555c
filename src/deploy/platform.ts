// What the operating system offers the file reads, in one place, so that a test on Linux can take
// the path a platform without it takes.
import { constants } from 'node:fs'

/**
 * The open flag that refuses a link in a path's last component (Linux, macOS), or 0 where the system
 * has none (Windows): there, the scan and the upload lstat the path before the open and compare the
 * opened file's device and inode with it (see openWithoutFollowing in files.ts).
 */
export const NO_FOLLOW: number = constants.O_NOFOLLOW ?? 0

/**
 * The flags a file of the site is opened with: never through a link in its last component (`noFollow`:
 * a link put in a scanned file's place fails with ELOOP), and never waiting for a writer (O_NONBLOCK: a
 * FIFO put in its place opens at once, and its fstat tells it is no file).
 */
export function readFlags(noFollow: number = NO_FOLLOW): number {
  return constants.O_RDONLY | noFollow | (constants.O_NONBLOCK ?? 0)
}

/**
 * What to do when the process runs out of file descriptors on `platform`; `lowerConcurrency` when
 * fewer uploads at once would help (the upload), not for the scan. Windows has no ulimit; macOS's
 * shell limit is raised with ulimit -n up to launchd's (launchctl limit maxfiles).
 */
export function descriptorLimitRemedy(
  platform: NodeJS.Platform = process.platform,
  lowerConcurrency = false,
): string {
  const orFewer = lowerConcurrency ? ', or lower concurrency' : ''
  if (platform === 'win32') {
    return lowerConcurrency
      ? 'lower concurrency (Windows has no ulimit)'
      : 'close the programs holding many files open (Windows has no ulimit)'
  }
  if (platform === 'darwin') return `raise the limit (ulimit -n, up to launchctl limit maxfiles)${orFewer}`
  return `raise the limit (ulimit -n)${orFewer}`
}
