// Virtual time for the tests: a clock that moves only when the code under test waits, and the timer
// the emulator runs its delayed changes on (a publish reaching the host). A wait of the deploy moves
// the clock and runs what fell due, so a test decides on events, whatever the machine's load.

import type { Clock } from '../../src/common/timeouts.ts'
import type { EmulatorTimer } from '../../src/emulator/index.ts'

export interface VirtualTime {
  clock: Clock
  /** For the emulator's `timer` option. */
  timer: EmulatorTimer
  /** For a deploy's `sleep`: moves the clock by `ms` and runs what fell due, then resolves. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>
  /** Moves the clock by `ms`, running what fell due, in order. */
  advance: (ms: number) => void
}

export function virtualTime(start = 0): VirtualTime {
  let now = start
  const due = new Set<{ at: number; callback: () => void }>()
  const advance = (ms: number) => {
    const until = now + ms
    for (;;) {
      const next = [...due].filter((d) => d.at <= until).sort((a, b) => a.at - b.at)[0]
      if (!next) break
      due.delete(next)
      now = Math.max(now, next.at)
      next.callback()
    }
    now = until
  }
  return {
    clock: { now: () => now },
    timer: {
      after(ms, callback) {
        const entry = { at: now + ms, callback }
        due.add(entry)
        return () => void due.delete(entry)
      },
    },
    sleep: async (ms, signal) => {
      signal?.throwIfAborted()
      advance(ms)
      await Promise.resolve()
    },
    advance,
  }
}
