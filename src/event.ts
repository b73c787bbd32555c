/** What the action needs to know about the event that started the run. */
export interface RunEvent {
  name: string
  /** owner/repo */
  repository: string | undefined
  runUrl: string | undefined
  pullRequest: PullRequestInfo | undefined
}

export interface PullRequestInfo {
  number: number
  headSha: string | undefined
  /** The head branch lives in another repository: secrets are not given to the run. */
  fromFork: boolean
}

const PULL_REQUEST_EVENTS = new Set(['pull_request', 'pull_request_target'])

interface PullRequestPayload {
  pull_request?: {
    number?: number
    head?: { sha?: string; repo?: { full_name?: string } | null }
    base?: { repo?: { full_name?: string } }
  }
}

export function readEvent(env: NodeJS.ProcessEnv, payload: unknown): RunEvent {
  const name = env.GITHUB_EVENT_NAME ?? ''
  const repository = env.GITHUB_REPOSITORY
  const runUrl =
    env.GITHUB_SERVER_URL && repository && env.GITHUB_RUN_ID
      ? `${env.GITHUB_SERVER_URL}/${repository}/actions/runs/${env.GITHUB_RUN_ID}`
      : undefined
  const pr = (payload as PullRequestPayload | undefined)?.pull_request
  let pullRequest: PullRequestInfo | undefined
  if (PULL_REQUEST_EVENTS.has(name) && typeof pr?.number === 'number') {
    const head = pr.head?.repo?.full_name
    const base = pr.base?.repo?.full_name ?? repository
    pullRequest = {
      number: pr.number,
      headSha: pr.head?.sha,
      // A deleted fork has no head repository: it was a fork all the same.
      fromFork: head === undefined || head !== base,
    }
  }
  return { name, repository, runUrl, pullRequest }
}

/** With an empty token: `fail`, or a reason to skip the deploy (shown as a warning). */
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
        'this workflow and deploy from a workflow_run workflow (see the README), or set if-no-token: fail to make this an error.',
    }
  }
  return { skip: false }
}
