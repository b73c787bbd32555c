#!/usr/bin/env node
// gamehost: the command-line client. Each subcommand drives the same core as the action of its name,
// and its messages name the inputs as flags (`--namespace staging`).

import './node-version.ts'
import { parseArgs } from 'node:util'
import { UsageError, errorMessage } from '../api/errors.ts'
import { nameInputsAs } from '../common/input-naming.ts'
import { redactWrites } from '../common/secrets.ts'
import { registerSecrets } from '../inputs/register-secrets.ts'
import { inputWarnings } from '../inputs/api-url.ts'
import { visible } from '../common/untrusted.ts'
import { runEmulatorCommand } from '../emulator/command.ts'
import { FLAG_NAMING, flagReader, type Command, type Flags, type RunIO } from './command.ts'
import { COMMANDS } from './commands.ts'
import { commandHelp, helpWidth, mainHelp } from './help.ts'
import {
  EXIT_FAILURE,
  EXIT_OK,
  EXIT_USAGE,
  exitCodeOf,
  print,
  printJson,
  reportError,
  stderrStream,
  write,
} from './output.ts'
import { didYouMean } from './suggest.ts'
import { terminalLogger } from './terminal.ts'
import packageJson from '../../package.json' with { type: 'json' }

const EMULATOR = { name: 'emulator', summary: 'Run a local emulator of the service' }
const VERSION = { name: 'version', summary: "Print gamehost's version (also -v, --version)" }
const HELP_WORDS = new Set(['help', '--help', '-h'])
const VERSION_WORDS = new Set(['version', '--version', '-v', '-V'])

/** Undefined: the emulator runs on. */
export async function main(args: string[]): Promise<number | undefined> {
  nameInputsAs(FLAG_NAMING)
  // Every text written from here on is redacted: the run's secrets are registered once its flags are read.
  redactWrites(process.stdout)
  redactWrites(process.stderr)
  const json = args.includes('--json')
  const { name, rest } = commandWord(args)
  if (name === undefined && json) return usageError('No command given: gamehost <command> [flags]', json)
  if (name === undefined || HELP_WORDS.has(name)) {
    const topic = name === 'help' ? COMMANDS.find((c) => c.name === rest[0]) : undefined
    const text = topic
      ? commandHelp(topic, helpWidth())
      : mainHelp([...COMMANDS, EMULATOR, VERSION], helpWidth())
    write(name === undefined ? 'stderr' : 'stdout', text + '\n')
    return name === undefined ? EXIT_USAGE : EXIT_OK
  }
  if (VERSION_WORDS.has(name)) {
    write('stdout', `gamehost ${packageJson.version}\n`)
    return EXIT_OK
  }
  if (name === EMULATOR.name) {
    const line = (channel: 'stdout' | 'stderr') => (text: string) => write(channel, text + '\n')
    return runEmulatorCommand(rest, { out: line('stdout'), err: line('stderr') }, 'gamehost emulator')
  }
  const command = COMMANDS.find((c) => c.name === name)
  if (!command) {
    const known = [...COMMANDS.map((c) => c.name), EMULATOR.name, VERSION.name, 'help']
    const unknown = `Unknown ${name.startsWith('-') ? 'option' : 'command'} ${visible(name)}.`
    return usageError(unknown + didYouMean(name, known), json)
  }
  // A --json before the command is the command's all the same.
  return runCommand(command, json && !rest.includes('--json') ? [...rest, '--json'] : rest)
}

/** Past any --json before it (`gamehost --json deploy`). */
function commandWord(args: string[]): { name: string | undefined; rest: string[] } {
  const at = args.findIndex((arg) => arg !== '--json')
  return at === -1 ? { name: undefined, rest: [] } : { name: args[at], rest: args.slice(at + 1) }
}

function usageError(message: string, json: boolean): number {
  write('stderr', `gamehost: ${message}\nRun 'gamehost --help' for the commands.\n`)
  if (json) printJson({}, new UsageError(message))
  return EXIT_USAGE
}

async function runCommand(command: Command, args: string[]): Promise<number> {
  const json = args.includes('--json')
  const logger = terminalLogger({ stream: stderrStream, verbose: args.includes('--verbose') })
  const io: RunIO = { logger, json, interactive: process.stderr.isTTY === true }
  try {
    const flags = parseFlags(command, args)
    registerSecrets(
      flagReader(flags),
      command.flags.map((f) => f.name),
    )
    if (flags.help) {
      write('stdout', commandHelp(command, helpWidth()) + '\n')
      return EXIT_OK
    }
    for (const warning of inputWarnings(flagReader(flags))) logger.warning(warning)
    const outcome = await command.run(flags, io)
    if (outcome.failure !== undefined) reportError(logger, outcome.failure)
    print(io, outcome.outputs, outcome.report, outcome.failure)
    return outcome.failure === undefined ? EXIT_OK : exitCodeOf(outcome.failure)
  } catch (error) {
    logger.close()
    const code = exitCodeOf(error)
    if (code === EXIT_USAGE) {
      write(
        'stderr',
        `gamehost ${command.name}: ${visible(errorMessage(error))}\n` +
          `Run 'gamehost ${command.name} --help' for the flags.\n`,
      )
    } else reportError(logger, error)
    if (json) print(io, {}, undefined, error)
    return code
  } finally {
    logger.close()
  }
}

const PARSED_AS = {
  list: { type: 'string', multiple: true },
  boolean: { type: 'boolean' },
  string: { type: 'string' },
} as const
const HELP_OPTION = { type: 'boolean', short: 'h' } as const

/** An unknown flag is named with the nearest known. */
function parseFlags(command: Command, args: string[]): Flags {
  const options = Object.fromEntries(
    command.flags.map((f) => [f.name, f.name === 'help' ? HELP_OPTION : PARSED_AS[f.type]]),
  )
  const known = command.flags.map((f) => f.name)
  const { tokens } = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true })
  for (const token of tokens) {
    const negated = token.kind === 'option' && token.name.startsWith('no-') && token.name.slice(3) in options
    if (token.kind !== 'option' || token.name in options || negated) continue
    throw new UsageError(
      `Unknown option ${visible(token.rawName)}.${didYouMean(token.name, known, (f) => `--${f}`)}`,
    )
  }
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false, allowNegative: true }).values
  } catch (error) {
    throw new UsageError(errorMessage(error), { cause: error })
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code
  },
  (error: unknown) => {
    write('stderr', `gamehost: ${visible(errorMessage(error))}\n`)
    process.exitCode = EXIT_FAILURE
  },
)
