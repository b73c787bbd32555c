// Rate limits per client address and per endpoint, like the real service's: counted in fixed
// 15-minute windows, 15 times the per-minute rate in each.

const WINDOW_MS = 15 * 60_000
const MINUTES_PER_WINDOW = WINDOW_MS / 60_000

export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>()

  /**
   * Counts a request at `now` when `key` has fewer than 15 x `perMinute` requests in the current
   * window and answers undefined; otherwise counts nothing and answers when the window ends.
   */
  take(key: string, perMinute: number, now: number): number | undefined {
    const windowStart = now - (now % WINDOW_MS)
    let window = this.windows.get(key)
    if (!window || window.start !== windowStart) {
      window = { start: windowStart, count: 0 }
      this.windows.set(key, window)
    }
    if (window.count >= perMinute * MINUTES_PER_WINDOW) return windowStart + WINDOW_MS
    window.count += 1
    return undefined
  }
}
