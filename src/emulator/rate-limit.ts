// Sliding-window rate limits per token and per endpoint, like the real service's.

const WINDOW_MS = 60_000

export class RateLimiter {
  private readonly recent = new Map<string, number[]>()

  /**
   * Records a request at `now` when `key` has fewer than `limit` requests in the last minute and
   * answers undefined; otherwise records nothing and answers when the oldest request leaves the window.
   */
  take(key: string, limit: number, now: number): number | undefined {
    const times = (this.recent.get(key) ?? []).filter((time) => time > now - WINDOW_MS)
    this.recent.set(key, times)
    if (times.length >= limit) return (times[0] ?? now) + WINDOW_MS
    times.push(now)
    return undefined
  }
}
