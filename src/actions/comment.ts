import type { getOctokit } from '@actions/github'
import { setTimeout as delay } from 'node:timers/promises'
import type { Logger } from '../common/logger.ts'
import { previewMarker, readState, type PreviewState } from './preview.ts'
import { describeGitHubError, githubStatus } from './github-errors.ts'

/**
 * A pull request's sticky preview comment: found by its marker on any page, among the comments the
 * action's own identity wrote. Anyone can post a comment carrying the marker: such a comment is
 * neither read nor edited.
 */
export interface StickyComment {
  /** The state the comment remembers; undefined when there is no comment yet or it cannot be read. */
  load(): Promise<PreviewState | undefined>
  /** Creates the comment or updates it in place. Never throws: a comment must not fail a deploy. */
  save(body: string, options?: { withinMs?: number }): Promise<void>
}

type Octokit = ReturnType<typeof getOctokit>

/**
 * How long the deploy may wait on GitHub: each call is abandoned after `callTimeoutMs` and tried
 * `retries` more times if it may succeed then; all calls together stop after `budgetMs`.
 */
export interface GitHubBounds {
  callTimeoutMs: number
  retries: number
  budgetMs: number
  /** Before a retry: this, doubled each time. */
  retryDelayMs: number
}

const GITHUB_BOUNDS: GitHubBounds = {
  callTimeoutMs: 15_000,
  retries: 2,
  budgetMs: 60_000,
  retryDelayMs: 1_000,
}

const PER_PAGE = 100

export function stickyComment(options: {
  token: string
  repository: string
  issue: number
  key: string
  logger: Pick<Logger, 'info' | 'warning'>
  bounds?: Partial<GitHubBounds>
}): StickyComment {
  const bounds = { ...GITHUB_BOUNDS, ...options.bounds }
  const created = Date.now()
  let deadline = created + bounds.budgetMs
  /** Runs one GitHub call with its time-out, retrying what a retry can fix, within the budget. */
  const bounded = async <T>(call: (signal: AbortSignal) => Promise<T>, retryTimeouts = true): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      const remaining = deadline - Date.now()
      if (remaining <= 0)
        throw new GitHubCallError(`GitHub took more than ${(deadline - created) / 1000} s in all`)
      const timeout = Math.min(bounds.callTimeoutMs, remaining)
      // A timer of our own, not AbortSignal.timeout(): that one is unref'd, and a hung call would then
      // let the process end with the step's outcome unwritten.
      const controller = new AbortController()
      const timer = setTimeout(() => controller.abort(), timeout)
      const { signal } = controller
      let failure: unknown
      try {
        return await call(signal)
      } catch (error) {
        failure = signal.aborted
          ? new GitHubCallError(`no answer from GitHub within ${timeout / 1000} s`, { cause: error })
          : error
      } finally {
        clearTimeout(timer)
      }
      const attempts = ` (${attempt + 1} attempt${attempt ? 's' : ''})`
      const timedOut = failure instanceof GitHubCallError
      if (!retryable(failure) || (timedOut && !retryTimeouts) || attempt >= bounds.retries) {
        if (failure instanceof Error && attempt > 0) failure.message += attempts
        throw failure
      }
      const wait = Math.min(bounds.retryDelayMs * 2 ** attempt, Math.max(0, deadline - Date.now()))
      await delay(wait)
    }
  }
  const [owner = '', repo = ''] = options.repository.split('/')
  // Evaluated only when a comment is made: Octokit costs start-up time and memory most runs never
  // need. "eager" keeps it inside dist/index.js: ncc wrote a separate chunk without license notices.
  const octokitReady = import(/* webpackMode: "eager" */ '@actions/github').then((github) =>
    github.getOctokit(options.token),
  )
  const marker = previewMarker(options.key)
  let commentId: number | undefined
  let loaded = false

  let identity: Promise<string> | undefined
  /**
   * This preview's comments that github-token's identity wrote, oldest first (GitHub lists comments
   * oldest first), and how many others carry the marker. With `firstOnly`, it stops at the first.
   */
  const listOurs = async (
    firstOnly: boolean,
  ): Promise<{ ours: Array<{ id: number; state: PreviewState }>; ignored: number; self: string }> => {
    const octokit = await octokitReady
    identity ??= ownLogin(octokit, bounded)
    const login = await identity.catch((error: unknown) => {
      identity = undefined
      throw error
    })
    const ours: Array<{ id: number; state: PreviewState }> = []
    let ignored = 0
    // Page by page, each page a bounded call of its own (paginate.iterator drops the request's signal).
    for (let page = 1; ; page++) {
      const { data } = await bounded((signal) =>
        octokit.rest.issues.listComments({
          owner,
          repo,
          issue_number: options.issue,
          per_page: PER_PAGE,
          page,
          request: { signal },
        }),
      )
      for (const comment of data) {
        const state = comment.body ? readState(comment.body, options.key) : undefined
        if (!state) continue
        if (comment.user?.login !== login) {
          ignored++
          continue
        }
        ours.push({ id: comment.id, state })
        if (firstOnly) return { ours, ignored, self: login }
      }
      if (data.length < PER_PAGE) break
    }
    return { ours, ignored, self: login }
  }

  const find = async (): Promise<PreviewState | undefined> => {
    const { ours, ignored, self: login } = await listOurs(true)
    const first = ours[0]
    if (first) {
      commentId = first.id
      return first.state
    }
    if (ignored > 0) {
      options.logger.warning(
        `Ignored ${ignored} comment${ignored === 1 ? '' : 's'} on #${options.issue} that carry the preview's marker ` +
          `but were not written by ${login}, the identity of github-token`,
      )
    }
    return undefined
  }

  /**
   * After this run created its comment: another run of the same preview may have created one at the
   * same moment (each found none, then each created one). The oldest of ours stays: a run whose comment
   * is not the oldest writes its text there and deletes its own, so one comment is left whichever
   * order the runs get here in. Never throws: the comment exists either way.
   */
  const updateComment = (octokit: Octokit, id: number, body: string) =>
    bounded((signal) =>
      octokit.rest.issues.updateComment({ owner, repo, comment_id: id, body, request: { signal } }),
    )

  const keepOldest = async (text: string, mine: number): Promise<void> => {
    try {
      const octokit = await octokitReady
      const { ours } = await listOurs(false)
      const oldest = ours.reduce<number | undefined>(
        (min, c) => (min === undefined || c.id < min ? c.id : min),
        undefined,
      )
      if (oldest === undefined || oldest === mine) return
      await updateComment(octokit, oldest, text)
      commentId = oldest
      try {
        await bounded((signal) =>
          octokit.rest.issues.deleteComment({ owner, repo, comment_id: mine, request: { signal } }),
        )
      } catch (error) {
        // Deleted already (by a run that saw the same two): nothing left to do.
        if (statusOf(error) !== 404) throw error
      }
      options.logger.info(
        `Another run of this preview commented on #${options.issue} at the same time: its comment was updated and this run's removed`,
      )
    } catch (error) {
      options.logger.warning(
        `Could not check #${options.issue} for a second preview comment made at the same time: ${describe(error)}`,
      )
    }
  }

  return {
    async load() {
      try {
        const state = await find()
        loaded = true
        return state
      } catch (error) {
        options.logger.warning(`Could not read the comments of #${options.issue}: ${describe(error)}`)
        return undefined
      }
    },
    async save(body, saveOptions) {
      // A cancelled run has seconds left before it is killed: its comment gets no more.
      if (saveOptions?.withinMs !== undefined)
        deadline = Math.min(deadline, Date.now() + saveOptions.withinMs)
      const text = `${marker}\n${body}`
      try {
        const octokit = await octokitReady
        if (!loaded) await find()
        if (commentId !== undefined) {
          const id = commentId
          await updateComment(octokit, id, text)
          options.logger.info(`Updated the preview comment on #${options.issue}`)
        } else {
          // Not retried after a time-out: the comment may have been created, and a second would follow.
          const created = await bounded(
            (signal) =>
              octokit.rest.issues.createComment({
                owner,
                repo,
                issue_number: options.issue,
                body: text,
                request: { signal },
              }),
            false,
          )
          commentId = created.data.id
          options.logger.info(`Commented on #${options.issue}`)
          await keepOldest(text, created.data.id)
        }
      } catch (error) {
        // Advice about permissions only where GitHub refused: not for a time-out or a GitHub outage.
        const refused = [401, 403, 404].includes(statusOf(error) ?? 0)
        options.logger.warning(
          `Could not comment on #${options.issue}: ${describe(error)}. The deploy itself is fine` +
            (refused
              ? "; to get the comment, give the job 'permissions: pull-requests: write' and pass github-token."
              : '.'),
        )
      }
    },
  }
}

/** The GitHub App bot that a workflow's GITHUB_TOKEN writes as. */
const ACTIONS_BOT = 'github-actions[bot]'

/**
 * The login github-token writes comments as: a personal token's user, else (an installation token,
 * which may not read /user) the Actions bot.
 */
async function ownLogin(
  octokit: Octokit,
  bounded: <T>(call: (signal: AbortSignal) => Promise<T>) => Promise<T>,
): Promise<string> {
  try {
    const { data } = await bounded((signal) => octokit.rest.users.getAuthenticated({ request: { signal } }))
    return data.login
  } catch (error) {
    const status = (error as { status?: unknown }).status
    if (status === 401 || status === 403) return ACTIONS_BOT
    throw error
  }
}

/** A connection error (no answer from GitHub) as such: Octokit gives it status 500, which GitHub never sent. */
function describe(error: unknown): string {
  return error instanceof GitHubCallError ? error.message : describeGitHubError(error)
}

/** The status GitHub answered with; undefined for a time-out or a connection error. */
function statusOf(error: unknown): number | undefined {
  return error instanceof GitHubCallError ? undefined : githubStatus(error)
}

/** A GitHub call that got no answer in time (or ran out of the budget), as opposed to one GitHub refused. */
class GitHubCallError extends Error {
  override name = 'GitHubCallError'
}

/** What a retry may fix: no answer in time, a connection lost, GitHub's own failure or rate limit. */
function retryable(error: unknown): boolean {
  if (error instanceof GitHubCallError) return !error.message.includes('in all')
  const status = statusOf(error)
  return status === undefined || status === 429 || status >= 500
}
