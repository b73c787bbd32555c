// GitHub cancels a step with SIGINT, then SIGTERM about 7.5 s later, then kills it; a terminal user
// presses Ctrl-C. Either aborts the one signal every request and wait of the run listens to, so the
// run can still say what it did before it exits.

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

/** On Windows also SIGBREAK, which a console sends on Ctrl-Break. */
export function cancelSignals(platform: NodeJS.Platform = process.platform): NodeJS.Signals[] {
  return platform === 'win32' ? ['SIGINT', 'SIGTERM', 'SIGBREAK'] : ['SIGINT', 'SIGTERM']
}

/**
 * Aborts `signal` with a CancelledError on the first of `signals`; each further one calls `again` (the
 * CLI quits at once on a second Ctrl-C; the action keeps ending cleanly). dispose() gives the process
 * its own handling of these signals back.
 */
export function cancelOnSignals(
  signals: readonly NodeJS.Signals[],
  again?: (signal: NodeJS.Signals) => void,
): { signal: AbortSignal; dispose(): void } {
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
