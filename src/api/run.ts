// One run of the service, as the deploy, the close and each operation open it: the client, the retry
// policy, the time limits, the clock, and one signal that a cancellation or the run's deadline aborts.

import type { Dispatcher } from 'undici'
import type { Logger } from '../common/logger.ts'
import {
  DEFAULT_REQUEST_TIMEOUT_SECONDS,
  systemClock,
  systemTimer,
  timeoutsFor,
  type Clock,
  type Timeouts,
  type Timer,
} from '../common/timeouts.ts'
import { ServiceClient } from './client.ts'
import { createAgent } from './http.ts'
import { retryPolicy, type RetryPolicy } from '../common/retry.ts'
import type { Explain } from './errors.ts'

export interface RunOptions {
  connection: { apiUrl: string; token: string }
  logger: Logger
  /** `request-timeout` in ms (default the input's default). */
  requestTimeoutMs?: number
  /** Instead of those of requestTimeoutMs (tests make them short). */
  timeouts?: Timeouts
  retries?: number
  maxRetryAfterMs?: number
  retry?: Partial<RetryPolicy>
  /** Used instead of the run's own pool, and never closed by the run. */
  dispatcher?: Dispatcher
  signal?: AbortSignal
  /** Past it the run's signal aborts with a RunDeadlineError. Default none. */
  deadlineMs?: number
  /** For the deadline's message ("the servers run"). */
  name?: string
  explain?: Explain
  /** Default Date.now; the retry policy's own clock unless it has one. */
  clock?: Clock
  /** What a long wait says its progress on (default a real timer). */
  timer?: Timer
}

export interface Run extends AsyncDisposable {
  /** Made on first use (a dry run never makes one). */
  readonly client: ServiceClient
  readonly retry: RetryPolicy
  readonly timeouts: Timeouts
  readonly clock: Clock
  readonly timer: Timer
  /** Aborted by a cancellation (its CancelledError) or by the deadline (a RunDeadlineError). */
  readonly signal: AbortSignal
  readonly logger: Logger
  readonly dispatcher: Dispatcher
  dispose(): Promise<void>
}

/** The reason a run's signal carries when its deadline passed: named as AbortSignal.timeout's is. */
export class RunDeadlineError extends Error {
  override name = 'TimeoutError'
  readonly deadlineMs: number
  constructor(what: string, deadlineMs: number) {
    const within =
      deadlineMs % 60_000 === 0 && deadlineMs >= 60_000
        ? `${deadlineMs / 60_000} min`
        : `${deadlineMs / 1000} s`
    super(`The ${what} ran out of time: it did not finish within its deadline of ${within}`)
    this.deadlineMs = deadlineMs
  }
}

/** The Run of a deploy or a close. */
export function openTransferRun(
  inputs: {
    connection: RunOptions['connection']
    transfer: { requestTimeoutMs: number; retries: number; maxRetryAfterMs: number }
  },
  face: Pick<
    RunOptions,
    'logger' | 'retry' | 'dispatcher' | 'signal' | 'deadlineMs' | 'clock' | 'timer' | 'explain'
  >,
  name: string,
): Run {
  return openRun({ ...face, ...inputs.transfer, connection: inputs.connection, name })
}

export function openRun(options: RunOptions): Run {
  const timeouts =
    options.timeouts ?? timeoutsFor(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_SECONDS * 1000)
  const clock = options.clock ?? systemClock
  const overdue = new AbortController()
  const { deadlineMs } = options
  const timer =
    deadlineMs === undefined
      ? undefined
      : setTimeout(() => overdue.abort(new RunDeadlineError(options.name ?? 'run', deadlineMs)), deadlineMs)
  const signal = options.signal ? AbortSignal.any([options.signal, overdue.signal]) : overdue.signal
  const retry = retryPolicy({
    now: () => clock.now(),
    ...(options.retries !== undefined ? { retries: options.retries } : {}),
    ...(options.maxRetryAfterMs !== undefined ? { maxRetryAfterMs: options.maxRetryAfterMs } : {}),
    ...options.retry,
    signal,
  })
  let own: Dispatcher | undefined
  let client: ServiceClient | undefined
  let disposed = false
  const dispatcher = (): Dispatcher => {
    if (options.dispatcher) return options.dispatcher
    if (!own && disposed) throw new Error('The run is over: its connection pool is closed')
    return (own ??= createAgent())
  }
  const dispose = async () => {
    clearTimeout(timer)
    if (disposed) return
    disposed = true
    // destroy(), not close(): an aborted run must not wait for the requests still in flight.
    if (own) await (signal.aborted ? own.destroy() : own.close())
  }
  return {
    get client() {
      return (client ??= new ServiceClient({
        baseUrl: options.connection.apiUrl,
        token: options.connection.token,
        dispatcher: dispatcher(),
        logger: options.logger,
        retry,
        timeouts,
        signal,
        explain: options.explain,
      }))
    },
    retry,
    timeouts,
    clock,
    timer: options.timer ?? systemTimer,
    signal,
    logger: options.logger,
    get dispatcher() {
      return dispatcher()
    },
    dispose,
    [Symbol.asyncDispose]: dispose,
  }
}
