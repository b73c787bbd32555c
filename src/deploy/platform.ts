import { constants } from 'node:fs'

/** 0 on Windows: there the path is lstat'ed before the open (openWithoutFollowing in files.ts). */
export const NO_FOLLOW: number = constants.O_NOFOLLOW ?? 0

/** Never through a link (ELOOP), never waiting for a writer (O_NONBLOCK: a FIFO opens at once). */
export function readFlags(noFollow: number = NO_FOLLOW): number {
  return constants.O_RDONLY | noFollow | (constants.O_NONBLOCK ?? 0)
}

/** What to do when out of file descriptors: the upload already lowers its concurrency itself. */
export function descriptorLimitRemedy(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') return 'close the programs holding many files open (Windows has no ulimit)'
  if (platform === 'darwin') return 'raise the limit (ulimit -n, up to launchctl limit maxfiles)'
  return 'raise the limit (ulimit -n)'
}
