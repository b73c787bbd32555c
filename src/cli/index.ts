#!/usr/bin/env node
// gamehost: the command-line client, for CI systems other than GitHub Actions and for laptops. Each
// subcommand drives the same core as the action of the same name (deploy.ts, servers.ts, lobby.ts,
// avatars.ts, validate.ts); its flags are the action's input names. Exit codes: 0 success, 1 failure,
// 2 bad usage.

import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { UsageError, ValidationFailedError, errorMessage } from '../api/errors.ts'
import { validationTitle } from '../api/rules.ts'
import { avatarsOperation } from '../operations/avatars.ts'
import type { Connection, GetInput } from '../inputs/common.ts'
import { ActionName, Input, Output, TOKEN_ENV } from '../inputs/constants.ts'
import {
  API_URL_ENV,
  GAME_ID_ENV,
  INPUTS,
  flagsOf,
  inputRow,
  type CliFlag,
  type CommandName,
} from '../inputs/table.ts'
import { cancelOnSignals, cancelSignals, isCancelled, type SignalCancellation } from '../common/cancel.ts'
import { deploy, deployFailure, type DeployResult } from '../deploy/pipeline.ts'
import { closeOutputs, closeReport, deployOutputs, deployReport, failureReport } from '../deploy/report.ts'
import { closePreview } from '../deploy/close.ts'
import { runEmulatorCommand } from '../emulator/command.ts'
import { hasTarget, readInputs, readPullRequestNumber, type RunContext } from '../inputs/deploy.ts'
import { lobbyOperation } from '../operations/lobby.ts'
import {
  OperationStoppedError,
  deadlineFromEnv,
  runOperation,
  type Operation,
} from '../operations/operation.ts'
import { renderText, type OutputValue, type Report } from '../common/report.ts'
import { inertJson, visible } from '../common/untrusted.ts'
import { redactWrites } from '../common/secrets.ts'
import { registerSecrets } from '../inputs/secrets.ts'
import { serversOperation } from '../operations/servers.ts'
import { terminalLogger, type TerminalLogger } from './terminal.ts'
import { validateOperation } from '../operations/validate.ts'
import { publishOperation } from '../operations/publish.ts'
import { sweepOperation } from '../operations/sweep.ts'
import { createAgent } from '../api/client.ts'
import { cliGitHub } from './github.ts'
import packageJson from '../../package.json' with { type: 'json' }

const EXIT_OK = 0
const EXIT_FAILURE = 1
const EXIT_USAGE = 2
/** What a shell reports for a program ended by Ctrl-C (128 + SIGINT). */
const EXIT_CANCELLED = 130

/** A flag: an input's (from the table of inputs) or one of the CLI's own. */
type Flag = CliFlag

interface Command {
  name: string
  /** One line in `gamehost --help`. */
  summary: string
  /** What `gamehost <command> --help` says it does. */
  description: string
  flags: Flag[]
  examples: string[]
  /** Runs the command with its parsed flags; resolves with the exit code. */
  run(flags: Flags, io: RunIO): Promise<number>
}

type Flags = Record<string, string | boolean | string[] | undefined>

interface RunIO {
  logger: TerminalLogger
  json: boolean
  interactive: boolean
}

const flag = (name: string, type: Flag['type'], help: string, value?: string): Flag => ({
  name,
  type,
  help,
  value,
})

const OUTPUT_FLAGS: Flag[] = [
  flag('json', 'boolean', "Print one JSON document with the action's outputs instead of text"),
  flag('verbose', 'boolean', 'Show debug lines (each request made)'),
  flag('help', 'boolean', 'Show this help'),
]

// The ids of the emulator's demo game (`gamehost emulator`), so that every example runs as written against it.
const EXAMPLE_CONNECTION = '--api-url https://api.example.com --game-id 4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const EXAMPLE_NAMESPACE = '3f6c2a9e-8b1d-4c7a-9e25-5d0b7a41c8f2'

const DEPLOY: Command = {
  name: ActionName.Deploy,
  summary: 'Deploy a built site: namespace, domain, matchmaker check, upload, publish',
  description:
    'Collect and hash the files of --path, find or create the namespace (--namespace), add the domain, have the\n' +
    'service validate the matchmaker config, upload every file to a new CDN site, and publish it to the namespace\n' +
    'as a new version, so that it is live at the URL printed: what the deploy action does.',
  flags: [
    ...flagsOf('deploy'),
    flag(
      Output.Manifest,
      'string',
      'Keep the manifest in this file (default: written to a private temporary folder, removed at the end)',
      'file',
    ),
    ...OUTPUT_FLAGS,
  ],
  examples: [
    'gamehost deploy --path build --dry-run',
    `GAMEHOST_TOKEN=... gamehost deploy ${EXAMPLE_CONNECTION} --path build --namespace pr-12 --version-id 8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53 --domain pr-12.preview.example.com`,
    `gamehost deploy ${EXAMPLE_CONNECTION} --path build --files '**' --files '!**/*.map' --json`,
  ],
  async run(flags, io) {
    const flagged = flagReader(flags)
    // Not given, compare-with is the action's default; given empty, no comparison.
    const get = (name: string) =>
      name === Input.CompareWith && flags[name] === undefined ? INPUTS.CompareWith.default : flagged(name)
    let context: RunContext | undefined
    const contextOnce = () => (context ??= runContext(process.env))
    const inputs = readInputs(get, contextOnce)
    if (!inputs.connection.token && !inputs.dryRun) throw missingToken()
    const cancellation = cancelOnCtrlC(io)
    const keepManifest = get(Output.Manifest).trim()
    // A private folder (mode 0700, a name nobody can guess): a planted link in /tmp cannot redirect it.
    const tempDir = await mkdtemp(path.join(os.tmpdir(), 'gamehost-'))
    let result: DeployResult
    try {
      result = await deploy(inputs, {
        deadlineMs: deadlineFromEnv(process.env),
        logger: io.logger,
        tempDir,
        manifestFile: keepManifest ? path.resolve(keepManifest) : undefined,
        tempDirRemoved: true,
        // A terminal shows the upload's progress in its status line: update it often.
        progressIntervalMs: io.interactive ? 250 : undefined,
        signal: cancellation.signal,
        // No GitHub client here (no compareCommits): the guard against an older build says it could
        // not run, and publishes.
        source: { commit: contextOnce().sha, ref: contextOnce().ref },
      })
    } catch (thrown) {
      const { error, partial } = deployFailure(thrown)
      if (!isCancelled(error) && !partial) throw error
      reportError(io, error)
      print(io, partial ? deployOutputs(partial) : {}, failureReport(error, partial))
      return isCancelled(error) ? EXIT_CANCELLED : EXIT_FAILURE
    } finally {
      cancellation.dispose()
      await rm(tempDir, { recursive: true, force: true })
    }
    if (result.siteId)
      io.logger.info(`Deployed site ${result.siteId} (upload ${result.uploadId ?? 'unknown'})`)
    print(io, deployOutputs(result), deployReport(result))
    return EXIT_OK
  },
}

const SERVERS: Command = operationCommand(serversOperation, {
  summary: 'List the game servers of an environment',
  description:
    'List the game servers of an environment that have all the given tags, newest first, following the\n' +
    "service's pages to the last one: what the servers action does.",
  examples: [
    `gamehost servers ${EXAMPLE_CONNECTION} --environment-id 0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15`,
    `gamehost servers ${EXAMPLE_CONNECTION} --environment-id 0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15 --tags '{"region":"eu"}' --include-destroyed --json`,
  ],
})

const LOBBY_LOGS: Command = operationCommand(lobbyOperation, {
  summary: "Show a lobby's status and metrics; exit 1 if it crashed",
  description:
    "Show a lobby's status (running or stopped, exit code) and metrics. A lobby that stopped with failed: true\n" +
    'makes the command exit 1, with its exit code in the message: what the lobby-logs action does.',
  examples: [
    `gamehost lobby-logs ${EXAMPLE_CONNECTION} --namespace-id ${EXAMPLE_NAMESPACE} --lobby-id 7d4e1a2b-3c5f-4e6a-8b9c-0d1e2f3a4b5c`,
  ],
})

const AVATARS: Command = operationCommand(avatarsOperation, {
  summary: "List the game's custom avatars",
  description: "List the game's custom avatars, complete or still uploading: what the avatars action does.",
  examples: [`gamehost avatars ${EXAMPLE_CONNECTION}`, `gamehost avatars ${EXAMPLE_CONNECTION} --json`],
})

const VALIDATE: Command = operationCommand(validateOperation, {
  summary: 'Validate a matchmaker config and/or a group display name',
  description:
    'Have the service validate a matchmaker config (against a namespace) and/or a group display name, and\n' +
    'print its errors with their paths; any error makes the command exit 1: what the validate action does.',
  examples: [
    `gamehost validate ${EXAMPLE_CONNECTION} --namespace-id ${EXAMPLE_NAMESPACE} --lobby-count-max 64 --max-players 16`,
    `gamehost validate ${EXAMPLE_CONNECTION} --group-display-name 'Night Owls' --json`,
  ],
})

const PUBLISH: Command = operationCommand(publishOperation, {
  summary: "Promote or roll back: set a namespace's version, uploading nothing",
  description:
    'Publish a version to a namespace: a version id, previous (the one published before the current one: a\n' +
    'rollback), or what another namespace serves (--from-namespace: a promotion): what the publish action does.',
  examples: [
    `gamehost publish ${EXAMPLE_CONNECTION} --namespace prod --version-id 5a0e7c2d-4b9f-4e1a-8d36-2c7f1b9e4a08`,
    `gamehost publish ${EXAMPLE_CONNECTION} --namespace-id ${EXAMPLE_NAMESPACE} --version-id 8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53 --json`,
    `gamehost publish ${EXAMPLE_CONNECTION} --namespace prod --version-id previous`,
  ],
})

const CLOSE: Command = {
  name: 'close',
  summary: "Retire a closed pull request's preview: the closed page, the domain freed",
  description:
    "Publish to the preview's namespace a small page saying the preview was closed (no build content, the\n" +
    "rest of the version's config kept) and remove its domain: what the deploy action does when its pull\n" +
    'request is closed. Running it twice changes nothing the second time.',
  flags: [...flagsOf('close'), ...OUTPUT_FLAGS],
  examples: [
    `gamehost close ${EXAMPLE_CONNECTION} --namespace pr-12 --pull-request 12 --domain pr-12.preview.example.com`,
  ],
  async run(flags, io) {
    const get = flagReader(flags)
    const inputs = readInputs(get, {}, { closing: true })
    if (!inputs.connection.token) throw missingToken()
    if (!hasTarget(inputs))
      throw new UsageError(
        `--${Input.Namespace} or --${Input.NamespaceId} is required: the preview's namespace`,
      )
    const cancellation = cancelOnCtrlC(io)
    try {
      const result = await closePreview(inputs, {
        deadlineMs: deadlineFromEnv(process.env),
        logger: io.logger,
        pullRequest: readPullRequestNumber(get),
        signal: cancellation.signal,
      })
      print(io, closeOutputs(result), closeReport(result))
      return EXIT_OK
    } catch (error) {
      if (!isCancelled(error)) throw error
      reportError(io, error)
      return EXIT_CANCELLED
    } finally {
      cancellation.dispose()
    }
  },
}

const SWEEP_REPOSITORY = 'repository'

const SWEEP: Command = {
  name: ActionName.Sweep,
  summary: 'Retire the previews whose pull requests are closed',
  description:
    "List the game's preview namespaces (named <namespace-prefix><number>, as the deploy makes them), ask GitHub\n" +
    "whether each pull request is open, and retire the closed ones as a closed pull request's run does: the closed\n" +
    'page, the domain freed. Previews retired already and open pull requests are left alone; --dry-run only lists.\n' +
    "The pull request's comment and GitHub deployments are updated by the sweep action, not here.",
  flags: [
    ...flagsOf(ActionName.Sweep),
    flag(
      SWEEP_REPOSITORY,
      'string',
      'The GitHub repository of the pull requests, owner/name (default the GITHUB_REPOSITORY environment variable)',
      'owner/name',
    ),
    ...OUTPUT_FLAGS,
  ],
  examples: [
    `GITHUB_TOKEN=... gamehost sweep ${EXAMPLE_CONNECTION} --repository studio/space-game --dry-run`,
    `GITHUB_TOKEN=... gamehost sweep ${EXAMPLE_CONNECTION} --repository studio/space-game --namespace-prefix preview- --json`,
  ],
  async run(flags, io) {
    const repository =
      (typeof flags[SWEEP_REPOSITORY] === 'string' ? flags[SWEEP_REPOSITORY] : '').trim() ||
      (process.env.GITHUB_REPOSITORY ?? '').trim()
    if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repository)) {
      throw new UsageError(
        repository
          ? `--${SWEEP_REPOSITORY} '${repository}' is not owner/name`
          : `--${SWEEP_REPOSITORY} is required (or GITHUB_REPOSITORY): the repository whose pull requests the previews are of`,
      )
    }
    const dispatcher = createAgent()
    try {
      const operation = sweepOperation((inputs) =>
        cliGitHub({ token: inputs.githubToken, repository, dispatcher, apiUrl: process.env.GITHUB_API_URL }),
      )
      return await runOperationCommand(operation, flags, io)
    } finally {
      await dispatcher.destroy()
    }
  },
}

const EMULATOR_SUMMARY = 'Run a local emulator of the service'

const COMMANDS: Command[] = [DEPLOY, SERVERS, LOBBY_LOGS, AVATARS, VALIDATE, PUBLISH, CLOSE, SWEEP]

/** Ctrl-C (or SIGTERM) ends the run cleanly, saying what it did; a second Ctrl-C quits at once. */
function cancelOnCtrlC(io: RunIO): SignalCancellation {
  const cancellation = cancelOnSignals(cancelSignals(), () => {
    io.logger.close()
    process.stderr.write('gamehost: quit at once\n')
    process.exit(EXIT_CANCELLED)
  })
  cancellation.signal.addEventListener('abort', () =>
    io.logger.warning(
      'Cancelling: nothing new starts, requests in flight are aborted (Ctrl-C again to quit at once)',
    ),
  )
  return cancellation
}

/** A subcommand that runs an operation: the same read, run, outputs and report as its action. */
function operationCommand<I extends Connection, R>(
  operation: Operation<I, R>,
  spec: { summary: string; description: string; examples: string[] },
): Command {
  return {
    name: operation.name,
    summary: spec.summary,
    description: spec.description,
    flags: [...flagsOf(operation.name as CommandName), ...OUTPUT_FLAGS],
    examples: spec.examples,
    run: (flags, io) => runOperationCommand(operation, flags, io),
  }
}

/** Reads the operation's inputs from the flags, runs it, prints its outputs and report: its exit code. */
async function runOperationCommand<I extends Connection, R>(
  operation: Operation<I, R>,
  flags: Flags,
  io: RunIO,
): Promise<number> {
  const inputs = operation.read(flagReader(flags), { missingToken })
  const cancellation = cancelOnCtrlC(io)
  let result: R
  try {
    result = await runOperation(operation, inputs, {
      logger: io.logger,
      signal: cancellation.signal,
      deadlineMs: deadlineFromEnv(process.env),
    })
  } catch (error) {
    if (!(error instanceof OperationStoppedError)) throw error
    reportError(io, error)
    return isCancelled(error.cause) ? EXIT_CANCELLED : EXIT_FAILURE
  } finally {
    cancellation.dispose()
  }
  print(io, operation.outputs(result), operation.report(result, inputs))
  const failure = operation.failure?.(result, inputs)
  if (!failure) return EXIT_OK
  reportError(io, failure)
  return EXIT_FAILURE
}

/** Reads an input by name from the flags: lists joined by lines, booleans as text, the token from the env too. */
function flagReader(flags: Flags): GetInput {
  return (name) => {
    const value = flags[name]
    const env = inputRow(name)?.flag?.env
    if (env && (value === undefined || value === '')) return process.env[env] ?? ''
    if (value === undefined) return ''
    if (Array.isArray(value)) return value.join('\n')
    return String(value)
  }
}

function missingToken(): UsageError {
  return new UsageError(`no token: set the ${TOKEN_ENV} environment variable (or pass --${Input.Token})`)
}

/** The outputs as one JSON document, or the report as text, on standard output. */
function print(io: RunIO, outputs: Record<string, OutputValue>, report: Report): void {
  io.logger.close()
  process.stdout.write(io.json ? inertJson(outputs, 2) + '\n' : '\n' + renderText(report))
}

function reportError(io: RunIO, error: unknown): void {
  if (error instanceof ValidationFailedError) {
    for (const problem of error.problems)
      io.logger.error(problem.description, { title: problem.title ?? validationTitle(problem.path) })
  }
  io.logger.error(errorMessage(error))
}

/**
 * Where the deploy runs from, for the default site name (`<repository> <branch> <short sha>`, as the
 * action names it): GitHub's or GitLab's variables, else git's answer, else nothing (a dated name).
 */
function runContext(env: NodeJS.ProcessEnv): RunContext {
  if (env.GITHUB_REPOSITORY)
    return { repository: env.GITHUB_REPOSITORY, ref: env.GITHUB_REF, sha: env.GITHUB_SHA }
  if (env.CI_PROJECT_PATH)
    return { repository: env.CI_PROJECT_PATH, ref: env.CI_COMMIT_REF_NAME, sha: env.CI_COMMIT_SHA }
  try {
    // --abbrev-ref applies to the revisions after it: the sha first, then the branch name.
    const [top, sha, branch] = execFileSync(
      'git',
      ['rev-parse', '--show-toplevel', 'HEAD', '--abbrev-ref', 'HEAD'],
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 5000,
      },
    ).split('\n')
    return {
      repository: top ? path.basename(top) : undefined,
      ref: branch === 'HEAD' ? undefined : branch,
      sha,
    }
  } catch {
    return {}
  }
}

/**
 * The input names that open a message, as the flags they are here: `game-id is required` ->
 * `--game-id (or GAMEHOST_GAME_ID) is required`.
 */
function asFlags(command: Command, message: string): string {
  const flags = new Map(command.flags.map((f) => [f.name, f]))
  return message.replace(/^([a-z-]+)(?=[ :,])( is required)?/, (whole, name: string, required?: string) => {
    const flag = flags.get(name)
    if (!flag) return whole
    return `--${name}${required && flag.env ? ` (or ${flag.env})` : ''}${required ?? ''}`
  })
}

/** The flags read from an environment variable too: `GAMEHOST_API_URL (--api-url)`, ... */
function envFlags(command: Command): string {
  return command.flags
    .filter((f) => f.env)
    .map((f) => `${f.env} (--${f.name})`)
    .join(', ')
}

function commandHelp(command: Command): string {
  const label = (f: Flag) => {
    if (f.name === 'help') return '-h, --help'
    // Booleans that default to true are turned off with --no-<name>.
    const name = f.negatable ? `[no-]${f.name}` : f.name
    return `--${name}${f.value ? ` <${f.value}>` : ''}${f.type === 'list' ? ' ...' : ''}`
  }
  const width = Math.max(...command.flags.map((f) => label(f).length))
  return [
    `Usage: gamehost ${command.name} [flags]`,
    '',
    command.description,
    '',
    'Flags (the names of the action inputs):',
    ...command.flags.map((f) => `  ${label(f).padEnd(width)}  ${f.help}`),
    '',
    'Examples:',
    ...command.examples.map((example) => `  ${example}`),
    '',
    `Read from the environment when their flag is not given: ${envFlags(command)}.`,
    'Exit codes: 0 success, 1 failure, 2 bad usage.',
  ].join('\n')
}

function mainHelp(): string {
  const rows: Array<[string, string]> = [
    ...COMMANDS.map((c): [string, string] => [c.name, c.summary]),
    ['emulator', EMULATOR_SUMMARY],
  ]
  return [
    'Usage: gamehost <command> [flags]',
    '',
    'Deploy a game to the game hosting service and query it: the GitHub actions of gamehost, from any shell.',
    '',
    'Commands:',
    ...rows.map(([name, summary]) => `  ${name.padEnd(12)}${summary}`),
    '',
    "Run 'gamehost <command> --help' for its flags. The token, api-url and game-id are read from the",
    `${TOKEN_ENV}, ${API_URL_ENV} and ${GAME_ID_ENV} environment variables when their flag is not given.`,
    'Exit codes: 0 success, 1 failure, 2 bad usage.',
  ].join('\n')
}

/** Runs the CLI with its arguments; resolves with the exit code (undefined: the emulator runs on). */
export async function main(args: string[]): Promise<number | undefined> {
  const [name, ...rest] = args
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? COMMANDS.find((c) => c.name === rest[0]) : undefined
    const text = topic ? commandHelp(topic) : mainHelp()
    if (name === undefined) {
      process.stderr.write(text + '\n')
      return EXIT_USAGE
    }
    process.stdout.write(text + '\n')
    return EXIT_OK
  }
  if (name === '--version' || name === '-V') {
    process.stdout.write(`gamehost ${packageJson.version}\n`)
    return EXIT_OK
  }
  if (name === 'emulator') {
    return runEmulatorCommand(
      rest,
      { out: (line) => console.log(line), err: (line) => console.error(line) },
      'gamehost emulator',
    )
  }
  const command = COMMANDS.find((c) => c.name === name)
  if (!command) {
    process.stderr.write(`gamehost: unknown command '${name}'\n\n${mainHelp()}\n`)
    return EXIT_USAGE
  }

  let flags: Flags
  try {
    flags = parseArgs({
      args: rest,
      strict: true,
      allowPositionals: false,
      allowNegative: true,
      options: Object.fromEntries(
        command.flags.map((f) => [
          f.name,
          f.type === 'list'
            ? { type: 'string', multiple: true }
            : f.type === 'boolean'
              ? { type: 'boolean', ...(f.name === 'help' ? { short: 'h' } : {}) }
              : { type: 'string' },
        ]),
      ),
    }).values as Flags
  } catch (error) {
    process.stderr.write(
      `gamehost ${command.name}: ${visible(errorMessage(error))}\nRun 'gamehost ${command.name} --help' for the flags.\n`,
    )
    return EXIT_USAGE
  }
  if (flags.help) {
    process.stdout.write(commandHelp(command) + '\n')
    return EXIT_OK
  }

  // The run's secrets are known before anything runs; every text written from here on is redacted.
  registerSecrets(
    flagReader(flags),
    command.flags.map((f) => f.name),
  )
  redactWrites(process.stdout)
  redactWrites(process.stderr)
  const verbose = flags.verbose === true
  const logger = terminalLogger({ stream: process.stderr, verbose })
  const io: RunIO = { logger, json: flags.json === true, interactive: process.stderr.isTTY === true }
  try {
    return await command.run(flags, io)
  } catch (error) {
    logger.close()
    if (error instanceof UsageError) {
      process.stderr.write(
        `gamehost ${command.name}: ${visible(asFlags(command, errorMessage(error)))}\n` +
          `Run 'gamehost ${command.name} --help' for the flags.\n`,
      )
      return EXIT_USAGE
    }
    reportError(io, error)
    return EXIT_FAILURE
  } finally {
    logger.close()
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code
  },
  (error: unknown) => {
    console.error(`gamehost: ${visible(errorMessage(error))}`)
    process.exitCode = EXIT_FAILURE
  },
)
