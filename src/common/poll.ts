// The one poll loop: a check tried until it sees what it waits for, within a bound, its waits
// doubling from FIRST_WAIT_MS to LONGEST_WAIT_MS (the last one cut to the bound). What a change of a
// namespace needs (its build seen live, its host seen private) waits here: a publish reaches the CDN's
// edge seconds later, as its router polls its configuration every 2.5 s, after a queued worker.

import { setTimeout as sleepFor } from 'node:timers/promises'

export const FIRST_WAIT_MS = 500
export const LONGEST_WAIT_MS = 10_000

/** What a check that did not see it yet says: why, and whether a later check would say the same. */
export interface NotYet {
  /** A failure a later check would repeat (the host name does not resolve, its certificate is refused). */
  permanent?: boolean
}

export interface PollOptions<P extends NotYet> {
  timeoutMs: number
  clock: { now(): number }
  /** Waits between checks (default a timer); rejects when the signal aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
  /** Ends the poll at once, rejecting with its reason. */
  signal: AbortSignal
  /** Hears of each check that did not see it yet. */
  onNotYet?: (attempt: number, notYet: P) => void
  /** The first wait and the longest (default FIRST_WAIT_MS and LONGEST_WAIT_MS): equal, a steady pace. */
  waits?: { firstMs: number; longestMs: number }
}

export interface Polled<P extends NotYet> {
  seen: boolean
  attempts: number
  durationMs: number
  /** What the last check said, when it was not seen. */
  notYet?: P
}

/** Runs `check` until it returns undefined (seen), it says a permanent no, or `timeoutMs` has passed. */
export async function pollUntil<P extends NotYet>(
  check: (attempt: number) => Promise<P | undefined>,
  options: PollOptions<P>,
): Promise<Polled<P>> {
  const { clock, signal, timeoutMs } = options
  const sleep = options.sleep ?? ((ms, s) => sleepFor(ms, undefined, { signal: s }))
  const { firstMs, longestMs } = options.waits ?? { firstMs: FIRST_WAIT_MS, longestMs: LONGEST_WAIT_MS }
  const started = clock.now()
  let wait = firstMs
  for (let attempt = 1; ; attempt++) {
    signal.throwIfAborted()
    const notYet = await check(attempt)
    signal.throwIfAborted()
    const durationMs = clock.now() - started
    if (!notYet) return { seen: true, attempts: attempt, durationMs }
    options.onNotYet?.(attempt, notYet)
    const left = timeoutMs - durationMs
    if (notYet.permanent || left <= 0) return { seen: false, attempts: attempt, durationMs, notYet }
    await sleep(Math.min(wait, left), signal)
    wait = Math.min(wait * 2, longestMs)
  }
}
