import { readFileSync } from 'node:fs'
import { UsageError, errorMessage } from '../api/errors.ts'
import { Input } from '../inputs/constants.ts'
import type { BuildHead } from './github.ts'

export interface RunEvent {
  name: string
  /** owner/repo */
  repository: string | undefined
  /** https://github.com/owner/repo */
  repositoryUrl: string | undefined
  runUrl: string | undefined
  /** GITHUB_REF, or `refs/pull/<n>/merge` for a workflow_run deploy of pull request n. */
  ref: string | undefined
  pullRequest: PullRequestInfo | undefined
}

interface PullRequestInfo {
  number: number
  headSha: string | undefined
  /** The ref GitHub's deployments of the pull request carry. */
  headRef?: string
  closed?: boolean
  /** Secrets are not given to the run. */
  fromFork: boolean
  /** On workflow_run: to check that the pull-request input names its pull request. */
  build?: BuildHead
}

const PULL_REQUEST_EVENTS = new Set(['pull_request', 'pull_request_target'])

interface PullRequestPayload {
  action?: string
  pull_request?: {
    number?: number
    head?: { sha?: string; ref?: string; repo?: { full_name?: string } | null }
    base?: { repo?: { full_name?: string } }
  }
  workflow_run?: {
    head_sha?: string
    head_branch?: string
    head_repository?: { full_name?: string } | null
    repository?: { full_name?: string }
  }
}

/**
 * The event, and its pull request: the event's own on pull_request(_target), or on workflow_run the one
 * the `pull-request` input names (a fork's build hands its number over), built at the run's head_sha.
 */
export function readEvent(env: NodeJS.ProcessEnv, payload: unknown, pullRequestInput?: number): RunEvent {
  const name = env.GITHUB_EVENT_NAME ?? ''
  const repository = env.GITHUB_REPOSITORY
  const repositoryUrl =
    env.GITHUB_SERVER_URL && repository ? `${env.GITHUB_SERVER_URL}/${repository}` : undefined
  const runUrl =
    repositoryUrl && env.GITHUB_RUN_ID ? `${repositoryUrl}/actions/runs/${env.GITHUB_RUN_ID}` : undefined
  const { action, pull_request: pr, workflow_run: workflowRun } = (payload ?? {}) as PullRequestPayload
  let pullRequest: PullRequestInfo | undefined
  let ref = env.GITHUB_REF
  if (pullRequestInput !== undefined) {
    if (name !== 'workflow_run') {
      throw new UsageError(
        `${Input.PullRequest} is for workflow_run runs, which deploy a pull request's build; ` +
          `this is a ${name || 'local'} run: leave it empty (a pull_request run knows its pull request)`,
      )
    }
    const head = workflowRun?.head_repository?.full_name
    pullRequest = {
      number: pullRequestInput,
      headSha: workflowRun?.head_sha,
      fromFork: head === undefined || head !== (workflowRun?.repository?.full_name ?? repository),
      build: { repository: head, branch: workflowRun?.head_branch },
    }
    ref = `refs/pull/${pullRequestInput}/merge`
  } else if (PULL_REQUEST_EVENTS.has(name) && typeof pr?.number === 'number') {
    const head = pr.head?.repo?.full_name
    const base = pr.base?.repo?.full_name ?? repository
    pullRequest = {
      number: pr.number,
      headSha: pr.head?.sha,
      headRef: pr.head?.ref,
      closed: action === 'closed',
      // A deleted fork has no head repository: it was a fork all the same.
      fromFork: head === undefined || head !== base,
    }
  }
  return { name, repository, repositoryUrl, runUrl, ref, pullRequest }
}

interface EventFile {
  payload: unknown
  /** "is not JSON (…)", said of the file. */
  problem?: Error
}

/** As @actions/github reads it, without Octokit; a problem is said only when the run needs the payload. */
export function readEventFile(env: NodeJS.ProcessEnv): EventFile {
  const file = env.GITHUB_EVENT_PATH
  if (!file) return { payload: undefined }
  const problem = (what: string, error: unknown) => ({
    payload: undefined,
    problem: new Error(`${what} (${errorMessage(error)})`, { cause: error }),
  })
  let json: string
  try {
    json = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { payload: undefined }
    return problem('could not be read', error)
  }
  try {
    return { payload: JSON.parse(json) as unknown }
  } catch (error) {
    return problem('is not JSON', error)
  }
}

/** Deployed as a push, a closed pull request's preview would get the build instead of being retired. */
export function checkPullRequestRead(event: RunEvent, env: NodeJS.ProcessEnv, problem?: Error): void {
  const file = `its event file (GITHUB_EVENT_PATH: ${env.GITHUB_EVENT_PATH || 'not set'})`
  const { pullRequest } = event
  if (problem && pullRequest?.build) {
    throw new Error(
      `This is a ${event.name} run deploying pull request #${pullRequest.number}, but ${file} ${problem.message}: ` +
        "the build's head repository, branch and commit are read from it, so nothing was deployed",
      { cause: problem.cause },
    )
  }
  if (!PULL_REQUEST_EVENTS.has(event.name) || pullRequest) return
  throw new Error(
    `This is a ${event.name} run, but ${file} ${problem?.message ?? 'could not be read as a pull request event'}, ` +
      'so nothing was deployed: without its pull request the run would deploy as a push (no preview comment, ' +
      'and a closed pull request deployed instead of retired)',
    { cause: problem?.cause },
  )
}

export function whenNoToken(
  policy: 'auto' | 'fail' | 'skip',
  event: RunEvent,
): { skip: false } | { skip: true; reason: string } {
  if (policy === 'fail') return { skip: false }
  if (policy === 'skip')
    return { skip: true, reason: 'The token is empty and if-no-token is skip: the deploy is skipped.' }
  if (event.pullRequest?.fromFork) {
    return {
      skip: true,
      reason:
        `Pull request #${event.pullRequest.number} comes from a fork, and GitHub does not give secrets to runs of ` +
        'fork pull requests, so the token is empty: the deploy is skipped. To deploy previews of forks, build in ' +
        'this workflow and deploy from a workflow_run workflow (see docs/previews.md), or set if-no-token: fail to make this an error.',
    }
  }
  return { skip: false }
}
