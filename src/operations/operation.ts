// One operation of the service as every front end runs it: the GitHub action of its folder
// (servers/, lobby-logs/, ...) through action.ts, and the CLI subcommand of the same name. The
// operation reads its inputs, calls the service, and says what its outputs and its report are; it
// never imports @actions/*.

import type { Dispatcher } from 'undici'
import { ServiceClient, createAgent } from '../api/client.ts'
import { retryPolicy, type RetryPolicy } from '../api/retry.ts'
import type { Connection, GetInput, ReadOptions } from '../inputs/common.ts'
import type { Logger } from '../common/logger.ts'
import type { OutputValue, Report } from '../common/report.ts'

export interface OperationContext {
  logger: Logger
  /** Default: a keep-alive pool for this run, closed at its end. */
  dispatcher?: Dispatcher
  /** Retry timing (tests inject a sleep that returns at once). */
  retry?: Partial<RetryPolicy>
}

export interface Operation<I extends Connection, R> {
  /** The action's folder and the CLI's subcommand. */
  name: string
  /** Reads and checks every input (core.getInput in the action, the flags in the CLI). Throws UsageError. */
  read(get: GetInput, options?: ReadOptions): I
  run(inputs: I, context: OperationContext): Promise<R>
  /** Every output, by its name in action.yml. */
  outputs(result: R): Record<string, OutputValue>
  /** The job summary in the action, the text the CLI prints. */
  report(result: R, inputs: I): Report
  /**
   * Why the step fails although every call succeeded (a crashed lobby, a config the service finds
   * invalid), or undefined. The error is thrown after the outputs are set and the report written.
   */
  failure?(result: R, inputs: I): Error | undefined
}

/** Runs `fn` with a client of the service, on the context's dispatcher or a pool closed afterwards. */
export async function withClient<T>(
  connection: Connection,
  context: OperationContext,
  fn: (client: ServiceClient) => Promise<T>,
): Promise<T> {
  const dispatcher = context.dispatcher ?? createAgent()
  try {
    const client = new ServiceClient({
      baseUrl: connection.apiUrl,
      token: connection.token,
      dispatcher,
      logger: context.logger,
      retry: retryPolicy(context.retry),
    })
    return await fn(client)
  } finally {
    if (!context.dispatcher) await dispatcher.close()
  }
}
