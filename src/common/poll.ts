// The one poll loop: a check tried until it sees what it waits for, within a bound, its waits
// doubling from FIRST_WAIT_MS to LONGEST_WAIT_MS (the last one cut to the bound). A publish reaches the
// CDN's edge seconds later, as its router polls its configuration every 2.5 s, after a queued worker.
// A wait of minutes is never silent: every PROGRESS_EVERY_MS it says how it stands.

import { setTimeout as sleepFor } from 'node:timers/promises'
import { formatSeconds, plural } from './format.ts'
import type { Timer } from './timeouts.ts'

export const FIRST_WAIT_MS = 500
export const LONGEST_WAIT_MS = 10_000
export const PROGRESS_EVERY_MS = 15_000
/** A check under way for longer than this says what the host does now: it does not answer. */
const SLOW_CHECK_MS = 5_000

/** What a check that did not see it yet says. */
export interface NotYet {
  /** A failure a later check would repeat (the host name does not resolve, its certificate is refused). */
  permanent?: boolean
}

export interface Progress<P extends NotYet> {
  /** Checks ended so far. */
  attempts: number
  elapsedMs: number
  leftMs: number
  /** What the last check that ended said. */
  last?: P
  /** How long the check under way has run, when one is. */
  checkingMs?: number
}

export interface PollOptions<P extends NotYet> {
  timeoutMs: number
  clock: { now(): number }
  /** Waits between checks (default a timer); rejects when the signal aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
  signal: AbortSignal
  onNotYet?: (attempt: number, notYet: P) => void
  /** Default FIRST_WAIT_MS and LONGEST_WAIT_MS; equal, a steady pace. */
  waits?: { firstMs: number; longestMs: number }
  /** Said every `everyMs` (default PROGRESS_EVERY_MS) on `timer` until the poll ends. */
  progress?: { say: (progress: Progress<P>) => void; timer: Timer; everyMs?: number }
}

interface Polled<P extends NotYet> {
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
  const state: { attempts: number; last?: P; checkStarted?: number } = { attempts: 0 }
  const { progress } = options
  const stopProgress =
    progress &&
    every(progress.timer, progress.everyMs ?? PROGRESS_EVERY_MS, () => {
      const now = clock.now()
      const elapsedMs = now - started
      const { attempts, last, checkStarted } = state
      const standing: Progress<P> = { attempts, elapsedMs, leftMs: Math.max(timeoutMs - elapsedMs, 0) }
      if (last) standing.last = last
      if (checkStarted !== undefined) standing.checkingMs = now - checkStarted
      progress.say(standing)
    })
  try {
    let wait = firstMs
    for (let attempt = 1; ; attempt++) {
      signal.throwIfAborted()
      state.checkStarted = clock.now()
      const notYet = await check(attempt)
      state.checkStarted = undefined
      signal.throwIfAborted()
      const durationMs = clock.now() - started
      if (!notYet) return { seen: true, attempts: attempt, durationMs }
      Object.assign(state, { attempts: attempt, last: notYet })
      options.onNotYet?.(attempt, notYet)
      const left = timeoutMs - durationMs
      if (notYet.permanent || left <= 0) return { seen: false, attempts: attempt, durationMs, notYet }
      await sleep(Math.min(wait, left), signal)
      wait = Math.min(wait * 2, longestMs)
    }
  } finally {
    stopProgress?.()
  }
}

/** Calls `tick` every `everyMs` on `timer` until the answer is called: a long wait that is no poll. */
export function every(timer: Timer, everyMs: number, tick: () => void): () => void {
  let cancel = timer.after(everyMs, function again() {
    cancel = timer.after(everyMs, again)
    tick()
  })
  return () => cancel()
}

/**
 * How a poll stands, for a line of the log: "after 15.0 s (4 checks): <what the last check said>;
 * 285 s left", or "check 5 has waited 12.0 s for an answer (check 4: ...)" when the host does not answer.
 */
export function describeProgress<P extends NotYet>(
  progress: Progress<P>,
  said: (notYet: P) => string,
): string {
  const { attempts, elapsedMs, leftMs, last, checkingMs } = progress
  const lastSaid = last && said(last)
  const now =
    checkingMs !== undefined && (checkingMs >= SLOW_CHECK_MS || !lastSaid)
      ? `check ${attempts + 1} has waited ${formatSeconds(checkingMs)} for an answer${lastSaid ? ` (check ${attempts}: ${lastSaid})` : ''}`
      : lastSaid
  const after = attempts
    ? `${formatSeconds(elapsedMs)} (${plural(attempts, 'check')})`
    : formatSeconds(elapsedMs)
  return `after ${after}: ${now ?? 'no check has ended yet'}; ${Math.ceil(leftMs / 1000)} s left`
}
