// What a subcommand of the CLI is, and what every one shares: its flags read as inputs, Ctrl-C.

import { UsageError } from '../api/errors.ts'
import { cancelOnSignals, cancelSignals } from '../common/cancel.ts'
import type { OutputValue, Report } from '../common/report.ts'
import type { InputNaming } from '../common/input-naming.ts'
import type { GetInput } from '../inputs/common.ts'
import { Input, TOKEN_ENV } from '../inputs/constants.ts'
import { inputRow } from '../inputs/table.ts'
import type { Flag } from './flags.ts'
import { EXIT_CANCELLED, write } from './output.ts'
import type { TerminalLogger } from './terminal.ts'

export type Flags = Record<string, string | boolean | string[] | undefined>

export interface RunIO {
  logger: TerminalLogger
  json: boolean
  interactive: boolean
}

export interface Outcome {
  outputs: Record<string, OutputValue>
  report: Report | undefined
  /** A failure after something was done. */
  failure?: unknown
}

export interface Command {
  name: string
  /** One line in `gamehost --help`. */
  summary: string
  description: string
  flags: Flag[]
  examples: string[]
  /** A failure before anything was done is thrown. */
  run(flags: Flags, io: RunIO): Promise<Outcome>
}

/** The flags of the CLI itself, listed last in every --help. */
export const OUTPUT_FLAGS: Flag[] = (
  [
    ['json', "Print one JSON document with the action's outputs (and the error, on a failure)"],
    ['verbose', 'Show debug lines (each request made)'],
    ['help', 'Show this help'],
  ] as const
).map(([name, help]) => ({ name, type: 'boolean', help, group: 'output' }))

const shellWord = (value: string) =>
  /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`

/** The inputs named as the CLI's flags: `--namespace`, `--namespace staging`, `--no-verify`. */
export const FLAG_NAMING: InputNaming = {
  name: (input) => `--${input}`,
  assignment: (input, value) => {
    if (inputRow(input)?.flag?.type === 'boolean' && (value === 'true' || value === 'false'))
      return value === 'true' ? `--${input}` : `--no-${input}`
    return `--${input} ${shellWord(value)}`
  },
  source: (input) => {
    const env = inputRow(input)?.flag?.env
    return env ? `--${input} (or ${env})` : `--${input}`
  },
}

/** Lists joined by lines, booleans as text, the env's when not given. */
export function flagReader(flags: Flags): GetInput {
  return (name) => {
    const value = flags[name]
    const env = inputRow(name)?.flag?.env
    if (env && (value === undefined || value === '')) return process.env[env] ?? ''
    return Array.isArray(value) ? value.join('\n') : String(value ?? '')
  }
}

export function missingToken(): UsageError {
  return new UsageError(`no token: set the ${TOKEN_ENV} environment variable (or pass --${Input.Token})`)
}

/** `stopped` throws the failure, or makes it the outcome of a run that did something. */
export async function cancellable(
  io: RunIO,
  body: (signal: AbortSignal) => Promise<Outcome>,
  stopped: (error: unknown) => Outcome,
): Promise<Outcome> {
  const cancellation = cancelOnSignals(cancelSignals(), () => {
    io.logger.close()
    write('stderr', 'gamehost: quit at once\n')
    process.exit(EXIT_CANCELLED)
  })
  cancellation.signal.addEventListener('abort', () =>
    io.logger.warning(
      'Cancelling: nothing new starts, requests in flight are aborted (Ctrl-C again to quit at once)',
    ),
  )
  try {
    return await body(cancellation.signal)
  } catch (error) {
    return stopped(error)
  } finally {
    cancellation.dispose()
  }
}
