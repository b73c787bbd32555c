// A pull request's sticky preview comment, found by its marker among the comments the action's own
// identity wrote: anyone can post the marker. A comment never fails a deploy: a failure is a warning.

import type { Logger } from '../common/logger.ts'
import { retryPolicy, withRetries, type RetryPolicy, type RetryVerdict } from '../common/retry.ts'
import { messageOf, plural } from '../common/format.ts'
import { COMMENT_BUDGET_MS, COMMENT_CALL_TIMEOUT_MS, COMMENT_RETRY_DELAY_MS } from '../common/timeouts.ts'
import { previewMarker, readState, type PreviewState } from './preview.ts'
import { GitHubAnswerError, githubCall, githubStatus, type GitHubApi } from '../operations/github-client.ts'
import { actionsGitHub } from './github.ts'

/** How long the deploy may wait on GitHub: per call, and all calls together (`budgetMs`). */
export interface GitHubBounds {
  callTimeoutMs: number
  retries: number
  budgetMs: number
  retryDelayMs: number
}

const GITHUB_BOUNDS: GitHubBounds = {
  callTimeoutMs: COMMENT_CALL_TIMEOUT_MS,
  retries: 2,
  budgetMs: COMMENT_BUDGET_MS,
  retryDelayMs: COMMENT_RETRY_DELAY_MS,
}

const PER_PAGE = 100

/** What a workflow's GITHUB_TOKEN writes as. */
const ACTIONS_BOT = 'github-actions[bot]'

interface StickyCommentOptions {
  token: string
  repository: string
  issue: number
  key: string
  logger: Pick<Logger, 'info' | 'warning'>
  bounds?: Partial<GitHubBounds>
}

export function stickyComment(options: StickyCommentOptions): StickyComment {
  return new StickyComment(options)
}

/** A retry of what a retry can fix, after the retry-after GitHub asks for; a time-out only if `retryTimeouts`. */
export function githubVerdict(failure: unknown, retryTimeouts: boolean): RetryVerdict {
  if (failure instanceof GitHubCallError) return retryTimeouts && !failure.message.includes('in all')
  const status = githubStatus(failure)
  if (status !== undefined && status !== 429 && status < 500) return false
  const asked = failure instanceof GitHubAnswerError ? failure.retryAfter : undefined
  return asked !== undefined && /^\d+$/.test(asked) ? { afterMs: Number(asked) * 1000 } : true
}

type Ours = Array<{ id: number; state: PreviewState }>
type IssueComment = { id: number; body?: string | null; user?: { login?: string } | null }

export class StickyComment {
  readonly #options: StickyCommentOptions
  readonly #bounds: GitHubBounds
  readonly #policy: RetryPolicy
  readonly #created = Date.now()
  readonly #marker: string
  #commentId: number | undefined
  #loaded = false
  #identity: Promise<string> | undefined

  constructor(options: StickyCommentOptions) {
    this.#options = options
    this.#bounds = { ...GITHUB_BOUNDS, ...options.bounds }
    const { retries, retryDelayMs, budgetMs } = this.#bounds
    this.#policy = retryPolicy({
      retries,
      baseDelayMs: retryDelayMs,
      maxDelayMs: budgetMs,
      maxElapsedMs: budgetMs,
      deadlineAt: this.#created + budgetMs,
    })
    this.#marker = previewMarker(options.key)
  }

  async load(): Promise<PreviewState | undefined> {
    try {
      const state = await this.#find()
      this.#loaded = true
      return state
    } catch (error) {
      this.#options.logger.warning(
        `Could not read the comments of #${this.#options.issue}: ${messageOf(error)}`,
      )
      return undefined
    }
  }

  /** Never throws. */
  async save(body: string, saveOptions?: { withinMs?: number }): Promise<void> {
    // A cancelled run has seconds left before it is killed: its comment gets no more.
    const { withinMs } = saveOptions ?? {}
    if (withinMs !== undefined)
      this.#policy.deadlineAt = Math.min(this.#policy.deadlineAt!, Date.now() + withinMs)
    const text = `${this.#marker}\n${body}`
    const { issue, logger } = this.#options
    try {
      if (!this.#loaded) await this.#find()
      if (this.#commentId !== undefined) {
        await this.#update(this.#commentId, text)
        logger.info(`Updated the preview comment on #${issue}`)
      } else {
        // Not retried after a time-out: the comment may have been created, and a second would follow.
        const created = await this.#rest(
          (github) => github.post<IssueComment>(`${github.repo}/issues/${issue}/comments`, { body: text }),
          false,
        )
        this.#commentId = created.id
        logger.info(`Commented on #${issue}`)
        await this.#keepOldest(text, created.id)
      }
    } catch (error) {
      // Advice about permissions only where GitHub refused: not for a time-out or a GitHub outage.
      const refused = [401, 403, 404].includes(statusOf(error) ?? 0)
      logger.warning(
        `Could not comment on #${issue}: ${messageOf(error)}. The deploy itself is fine` +
          (refused
            ? "; to get the comment, give the job 'permissions: pull-requests: write' and pass github-token."
            : '.'),
      )
    }
  }

  /** `retryTimeouts` false for a call that must not run twice. */
  async #rest<T>(call: (github: GitHubApi) => Promise<T>, retryTimeouts = true): Promise<T> {
    let attempts = 0
    let last: unknown
    const attempt = async () => {
      attempts++
      try {
        return await this.#attempt(call)
      } catch (error) {
        last = error
        throw error
      }
    }
    const logger = { info: (line: string) => this.#options.logger.info(line), debug: () => {} }
    try {
      return await withRetries(
        'GitHub call',
        attempt,
        (f) => githubVerdict(f, retryTimeouts),
        this.#policy,
        logger,
      )
    } catch (error) {
      if (attempts > 1 && last instanceof Error)
        throw new RetriedCallError(`${messageOf(last)} (${attempts} attempts)`, { cause: last })
      throw last ?? error
    }
  }

  #attempt<T>(call: (github: GitHubApi) => Promise<T>): Promise<T> {
    const deadline = this.#policy.deadlineAt!
    const remaining = deadline - Date.now()
    if (remaining <= 0)
      throw new GitHubCallError(`GitHub took more than ${(deadline - this.#created) / 1000} s in all`)
    const { token, repository } = this.#options
    const timeoutMs = Math.min(this.#bounds.callTimeoutMs, remaining)
    return githubCall(
      actionsGitHub({ token, repository, timeoutMs }),
      call,
      (error, reason, _status, timedOut) => {
        throw timedOut ? new GitHubCallError(reason, { cause: error }) : error
      },
    )
  }

  async #find(): Promise<PreviewState | undefined> {
    const { ours, ignored, self: login } = await this.#listOurs(true)
    const first = ours[0]
    if (first) {
      this.#commentId = first.id
      return first.state
    }
    if (ignored > 0) {
      this.#options.logger.warning(
        `Ignored ${plural(ignored, 'comment')} on #${this.#options.issue} that carry the preview's marker ` +
          `but were not written by ${login}, the identity of github-token`,
      )
    }
    return undefined
  }

  /** Ours oldest first (as GitHub lists them), and how many others carry the marker. */
  async #listOurs(firstOnly: boolean): Promise<{ ours: Ours; ignored: number; self: string }> {
    const login = await this.#login()
    const ours: Ours = []
    let ignored = 0
    for (let page = 1; ; page++) {
      const data = await this.#rest((github) =>
        github.get<IssueComment[]>(`${github.repo}/issues/${this.#options.issue}/comments`, {
          per_page: PER_PAGE,
          page,
        }),
      )
      for (const comment of data) {
        const state = comment.body ? readState(comment.body, this.#options.key) : undefined
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

  /** Asked once (again after a failure); an installation token, which may not read /user, is the bot. */
  #login(): Promise<string> {
    this.#identity ??= this.#rest((github) => github.get<{ login: string }>('/user')).then(
      (user) => user.login,
      (error: unknown) => {
        const status = githubStatus(lastFailure(error))
        if (status === 401 || status === 403) return ACTIONS_BOT
        throw error
      },
    )
    return this.#identity.catch((error: unknown) => {
      this.#identity = undefined
      throw error
    })
  }

  #update(id: number, body: string) {
    return this.#rest((github) => github.patch(`${github.repo}/issues/comments/${id}`, { body }))
  }

  /**
   * Another run of the same preview may have created one at the same moment: the oldest of ours stays,
   * whichever order the runs get here in. Never throws: the comment exists either way.
   */
  async #keepOldest(text: string, mine: number): Promise<void> {
    const { issue, logger } = this.#options
    try {
      const { ours } = await this.#listOurs(false)
      const oldest = Math.min(...ours.map((c) => c.id))
      if (!ours.length || oldest === mine) return
      await this.#update(oldest, text)
      this.#commentId = oldest
      try {
        await this.#rest((github) => github.delete(`${github.repo}/issues/comments/${mine}`))
      } catch (error) {
        // Deleted already (by a run that saw the same two): nothing left to do.
        if (statusOf(error) !== 404) throw error
      }
      logger.info(
        `Another run of this preview commented on #${issue} at the same time: its comment was updated and this run's removed`,
      )
    } catch (error) {
      logger.warning(
        `Could not check #${issue} for a second preview comment made at the same time: ${messageOf(error)}`,
      )
    }
  }
}

/** No answer in time (or out of the budget), as opposed to a refusal. */
class GitHubCallError extends Error {}

class RetriedCallError extends Error {}

function lastFailure(error: unknown): unknown {
  return error instanceof RetriedCallError ? error.cause : error
}

function statusOf(error: unknown): number | undefined {
  const failure = lastFailure(error)
  return failure instanceof GitHubCallError ? undefined : githubStatus(failure)
}
