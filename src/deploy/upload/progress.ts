import { formatBytes } from '../../common/format.ts'
import type { Logger } from '../../common/logger.ts'

const PROGRESS_INTERVAL_MS = 5_000

export type Progress = ReturnType<typeof createProgress>

export const noProgress: Progress = { addBytes: () => {}, partDone: () => {}, stop: () => {} }

interface ProgressOptions {
  files: number
  bytes: number
  logger: Pick<Logger, 'info'>
  now: () => number
  intervalMs?: number
}

export function createProgress(options: ProgressOptions) {
  const started = options.now()
  // Only files sent in several parts.
  const partsLeft = new Map<string, number>()
  let bytes = 0
  let filesDone = 0
  const line = () => {
    const seconds = Math.max((options.now() - started) / 1000, 0.001)
    const rate = bytes / seconds
    // By bytes and by files: many small files are slow by their round trips, not their bytes.
    const byBytes = rate > 0 ? (options.bytes - bytes) / rate : Infinity
    const byFiles = filesDone > 0 ? ((options.files - filesDone) * seconds) / filesDone : 0
    const eta = Math.max(byBytes, byFiles)
    return (
      `Uploaded files ${filesDone}/${options.files}, ` +
      `${formatBytes(bytes)}/${formatBytes(options.bytes)}, ${formatBytes(rate)}/s, ${formatEta(eta)}`
    )
  }
  const timer = setInterval(() => options.logger.info(line()), options.intervalMs ?? PROGRESS_INTERVAL_MS)
  timer.unref()
  return {
    addBytes: (count: number) => void (bytes += count),
    /** A part of the file at `path` is stored; the file is done with its `of`-th. */
    partDone: (path: string, of: number) => {
      const left = (partsLeft.get(path) ?? of) - 1
      if (left > 0) return void partsLeft.set(path, left)
      partsLeft.delete(path)
      filesDone++
    },
    stop: () => {
      clearInterval(timer)
      options.logger.info(line())
    },
  }
}

function formatEta(seconds: number): string {
  if (!Number.isFinite(seconds)) return 'ETA unknown'
  if (seconds < 1) return 'ETA 0 s'
  if (seconds < 120) return `ETA ${Math.ceil(seconds)} s`
  return `ETA ${Math.floor(seconds / 60)} min ${Math.ceil(seconds % 60)} s`
}
