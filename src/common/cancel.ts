// Cancellation: GitHub cancels a step with SIGINT, then SIGTERM about 7.5 s later, then kills it; a
// terminal user presses Ctrl-C. Either aborts one signal that every request and wait of the run
// listens to, so the run can still say what it did before it exits.

/** The reason a cancelled run's signal carries, and the error its deploy ends with. */
export class CancelledError extends Error {
  override name = 'CancelledError'
  readonly by: string
  constructor(by: string) {
    super(`The run was cancelled (${by})`)
    this.by = by
  }
}

export function isCancelled(error: unknown): error is CancelledError {
  return error instanceof CancelledError
}

/** SIGINT and SIGTERM; on Windows also SIGBREAK, which a console sends on Ctrl-Break. */
export function cancelSignals(platform: NodeJS.Platform = process.platform): NodeJS.Signals[] {
  return platform === 'win32' ? ['SIGINT', 'SIGTERM', 'SIGBREAK'] : ['SIGINT', 'SIGTERM']
}

export interface SignalCancellation {
  signal: AbortSignal
  /** Stops listening: the process's own handling of these signals comes back. */
  dispose(): void
}

/**
 * Aborts `signal` with a CancelledError on the first of `signals` the process receives; each further
 * one calls `again` (the CLI quits at once on a second Ctrl-C; the action keeps ending cleanly).
 */
export function cancelOnSignals(
  signals: readonly NodeJS.Signals[],
  again?: (signal: NodeJS.Signals) => void,
): SignalCancellation {
  const controller = new AbortController()
  const onSignal = (received: NodeJS.Signals) => {
    if (controller.signal.aborted) again?.(received)
    else controller.abort(new CancelledError(received))
  }
  for (const name of signals) process.on(name, onSignal)
  return {
    signal: controller.signal,
    dispose: () => {
      for (const name of signals) process.off(name, onSignal)
    },
  }
}
