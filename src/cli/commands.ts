// The CLI's subcommands: one per action, driving the same core, and the close of a preview.

import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { UsageError } from '../api/errors.ts'
import { createAgent } from '../api/http.ts'
import { isCancelled } from '../common/cancel.ts'
import { GIT_TIMEOUT_MS } from '../common/timeouts.ts'
import { closePreview } from '../deploy/live/close.ts'
import { deploy, deployFailure } from '../deploy/pipeline.ts'
import {
  closeOutputs,
  closeReport,
  deployOutputs,
  deployReport,
  failureReport,
  siteSentence,
} from '../deploy/account.ts'
import type { Connection } from '../inputs/common.ts'
import { ActionName, Input, Output } from '../inputs/constants.ts'
import { hasTarget, readInputs, readPullRequestNumber, type RunContext } from '../inputs/deploy.ts'
import { GITHUB_TOKEN_ENV, INPUTS, type CommandName } from '../inputs/table.ts'
import { flagsOf } from './flags.ts'
import { avatarsOperation } from '../operations/avatars.ts'
import { lobbyOperation } from '../operations/lobby.ts'
import { listOpenPullRequests, readPullRequestState } from '../operations/github-client.ts'
import type { SweepGitHub } from '../operations/previews.ts'
import { makeRoomForPreview, previewOfDeploy, sweepOtherPreviews } from '../operations/preview-sweep.ts'
import type { Dispatcher } from 'undici'
import {
  OperationStoppedError,
  deadlineFromEnv,
  runOperation,
  type Operation,
} from '../operations/operation.ts'
import { publishOperation } from '../operations/publish.ts'
import { serversOperation } from '../operations/servers.ts'
import { sweepOperation } from '../operations/sweep.ts'
import { validateOperation } from '../operations/validate.ts'
import {
  OUTPUT_FLAGS,
  cancellable,
  flagReader,
  missingToken,
  type Command,
  type Flags,
  type Outcome,
  type RunIO,
} from './command.ts'

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
    {
      name: Output.Manifest,
      type: 'string',
      value: 'file',
      group: 'advanced',
      help: 'Keep the manifest in this file (default: written to a private temporary folder, removed at the end)',
    },
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
    const keepManifest = get(Output.Manifest).trim()
    // A private folder (mode 0700, a name nobody can guess): a planted link in /tmp cannot redirect it.
    const tempDir = await mkdtemp(path.join(os.tmpdir(), 'gamehost-'))
    // A deploy to a preview's namespace sweeps the other previews, asking GitHub when it can.
    const pullRequest = previewOfDeploy(inputs, undefined)
    const repository = process.env.GITHUB_REPOSITORY?.trim()
    const githubToken = process.env[GITHUB_TOKEN_ENV]?.trim()
    const dispatcher = pullRequest !== undefined && githubToken && repository ? createAgent() : undefined
    const sweepWith = (signal: AbortSignal) =>
      pullRequest === undefined
        ? undefined
        : {
            inputs,
            pullRequest,
            github: dispatcher && cliGitHub(githubToken!, repository!, dispatcher),
            logger: io.logger,
            signal,
          }
    const run = async (signal: AbortSignal): Promise<Outcome> => {
      const sweep = sweepWith(signal)
      const result = await deploy(inputs, {
        deadlineMs: deadlineFromEnv(process.env),
        logger: io.logger,
        tempDir,
        manifestFile: keepManifest ? path.resolve(keepManifest) : undefined,
        tempDirRemoved: true,
        // A terminal shows the upload's progress in its status line: update it often.
        progressIntervalMs: io.interactive ? 250 : undefined,
        signal,
        beforeCreating: sweep && (() => makeRoomForPreview(sweep)),
        // No GitHub client here (no compareCommits): the guard against an older build says it could
        // not run, and publishes.
        source: { commit: contextOnce().sha, ref: contextOnce().ref },
      })
      const said = siteSentence(result)
      if (said) io.logger.info(said)
      if (sweep && !signal.aborted) await sweepOtherPreviews(sweep)
      return { outputs: deployOutputs(result), report: deployReport(result) }
    }
    try {
      return await cancellable(io, run, (thrown) => {
        const { error, partial } = deployFailure(thrown)
        if (!isCancelled(error) && !partial) throw error
        return {
          outputs: partial ? deployOutputs(partial) : {},
          report: failureReport(error, partial),
          failure: error,
        }
      })
    } finally {
      await rm(tempDir, { recursive: true, force: true })
      await dispatcher?.destroy()
    }
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
    `gamehost publish ${EXAMPLE_CONNECTION} --namespace-id ${EXAMPLE_NAMESPACE} --version-id 5a0e7c2d-4b9f-4e1a-8d36-2c7f1b9e4a08`,
    `gamehost publish ${EXAMPLE_CONNECTION} --namespace-id ${EXAMPLE_NAMESPACE} --version-id 8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53 --json`,
    `gamehost publish ${EXAMPLE_CONNECTION} --namespace-id ${EXAMPLE_NAMESPACE} --version-id previous`,
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
    const pullRequest = readPullRequestNumber(get)
    return cancellable(
      io,
      async (signal) => {
        const result = await closePreview(inputs, {
          deadlineMs: deadlineFromEnv(process.env),
          logger: io.logger,
          pullRequest,
          signal,
        })
        return { outputs: closeOutputs(result), report: closeReport(result) }
      },
      (error) => stoppedOutcome(error, isCancelled(error)),
    )
  },
}

const SWEEP_REPOSITORY = 'repository'

const SWEEP: Command = {
  name: ActionName.Sweep,
  summary: 'Retire the previews whose pull requests are closed',
  description:
    "List the game's preview namespaces (named <namespace-prefix><number>, as the deploy makes them), ask GitHub\n" +
    "whether each pull request is open, and retire the closed ones as a closed pull request's run does: the closed\n" +
    'page, the domain freed. Only a namespace whose record names that pull request is retired; any other is skipped,\n' +
    'saying why. Previews retired already and open pull requests are left alone; --dry-run only lists.\n' +
    "The pull request's comment and GitHub deployments are updated by the sweep action, not here.",
  flags: [
    ...flagsOf(ActionName.Sweep),
    {
      name: SWEEP_REPOSITORY,
      type: 'string',
      value: 'owner/name',
      group: 'common',
      help: 'The GitHub repository of the pull requests, owner/name (default the GITHUB_REPOSITORY environment variable)',
    },
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
      const operation = sweepOperation((inputs) => cliGitHub(inputs.githubToken, repository, dispatcher))
      return await runOperationCommand(operation, flags, io)
    } finally {
      await dispatcher.destroy()
    }
  },
}

/** What the CLI asks GitHub for a sweep: which pull requests are open (GITHUB_API_URL, default api.github.com). */
function cliGitHub(token: string, repository: string, dispatcher: Dispatcher): SweepGitHub {
  const apiUrl = process.env.GITHUB_API_URL
  const options = (signal: AbortSignal) => ({ token, repository, apiUrl, dispatcher, signal })
  return {
    pullRequest: (number, signal) => readPullRequestState(options(signal), number),
    openPullRequests: (signal) => listOpenPullRequests(options(signal)),
  }
}

export const COMMANDS: Command[] = [DEPLOY, SERVERS, LOBBY_LOGS, AVATARS, VALIDATE, PUBLISH, CLOSE, SWEEP]

function operationCommand<I extends Connection, R>(
  operation: Operation<I, R>,
  spec: { summary: string; description: string; examples: string[] },
): Command {
  return {
    name: operation.name,
    ...spec,
    flags: [...flagsOf(operation.name as CommandName), ...OUTPUT_FLAGS],
    run: (flags, io) => runOperationCommand(operation, flags, io),
  }
}

async function runOperationCommand<I extends Connection, R>(
  operation: Operation<I, R>,
  flags: Flags,
  io: RunIO,
): Promise<Outcome> {
  const inputs = operation.read(flagReader(flags), { missingToken })
  return cancellable(
    io,
    async (signal) => {
      const deadlineMs = deadlineFromEnv(process.env)
      const result = await runOperation(operation, inputs, { logger: io.logger, signal, deadlineMs })
      return {
        outputs: operation.outputs(result),
        report: operation.report(result, inputs),
        failure: operation.failure?.(result, inputs),
      }
    },
    (error) => stoppedOutcome(error, error instanceof OperationStoppedError),
  )
}

/** A run stopped midway: its failure, with nothing to report; anything else is thrown. */
function stoppedOutcome(error: unknown, stopped: boolean): Outcome {
  if (!stopped) throw error
  return { outputs: {}, report: undefined, failure: error }
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
    const args = ['rev-parse', '--show-toplevel', 'HEAD', '--abbrev-ref', 'HEAD']
    const answer = execFileSync('git', args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: GIT_TIMEOUT_MS,
    })
    const [top, sha, branch] = answer.split('\n')
    const ref = branch === 'HEAD' ? undefined : branch
    return { repository: top ? path.basename(top) : undefined, ref, sha }
  } catch {
    return {}
  }
}
