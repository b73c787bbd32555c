import type { getOctokit } from '@actions/github'
import type { Logger } from './logger.ts'
import { previewMarker, readState, type PreviewState } from './preview.ts'

/**
 * A pull request's sticky preview comment: found by its marker on any page, among the comments the
 * action's own identity wrote. Anyone can post a comment carrying the marker: such a comment is
 * neither read nor edited.
 */
export interface StickyComment {
  /** The state the comment remembers; undefined when there is no comment yet or it cannot be read. */
  load(): Promise<PreviewState | undefined>
  /** Creates the comment or updates it in place. Never throws: a comment must not fail a deploy. */
  save(body: string): Promise<void>
}

type Octokit = ReturnType<typeof getOctokit>

export function stickyComment(options: {
  token: string
  repository: string
  issue: number
  key: string
  logger: Pick<Logger, 'info' | 'warning'>
}): StickyComment {
  const [owner = '', repo = ''] = options.repository.split('/')
  // Evaluated only when a comment is made: Octokit costs start-up time and memory most runs never
  // need. "eager" keeps it inside dist/index.js: ncc wrote a separate chunk without license notices.
  const octokitReady = import(/* webpackMode: "eager" */ '@actions/github').then((github) =>
    github.getOctokit(options.token),
  )
  const marker = previewMarker(options.key)
  let commentId: number | undefined
  let loaded = false

  const find = async (): Promise<PreviewState | undefined> => {
    const octokit = await octokitReady
    const self = await ownLogin(octokit)
    let ignored = 0
    const pages = octokit.paginate.iterator(octokit.rest.issues.listComments, {
      owner,
      repo,
      issue_number: options.issue,
      per_page: 100,
    })
    for await (const page of pages) {
      for (const comment of page.data) {
        const state = comment.body ? readState(comment.body, options.key) : undefined
        if (!state) continue
        if (comment.user?.login !== self) {
          ignored++
          continue
        }
        commentId = comment.id
        return state
      }
    }
    if (ignored > 0) {
      options.logger.warning(
        `Ignored ${ignored} comment${ignored === 1 ? '' : 's'} on #${options.issue} that carry the preview's marker ` +
          `but were not written by ${self}, the identity of github-token`,
      )
    }
    return undefined
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
    async save(body) {
      const text = `${marker}\n${body}`
      try {
        const octokit = await octokitReady
        if (!loaded) await find()
        if (commentId !== undefined) {
          await octokit.rest.issues.updateComment({ owner, repo, comment_id: commentId, body: text })
          options.logger.info(`Updated the preview comment on #${options.issue}`)
        } else {
          const created = await octokit.rest.issues.createComment({
            owner,
            repo,
            issue_number: options.issue,
            body: text,
          })
          commentId = created.data.id
          options.logger.info(`Commented on #${options.issue}`)
        }
      } catch (error) {
        options.logger.warning(
          `Could not comment on #${options.issue}: ${describe(error)}. The deploy itself is fine; to get the comment, ` +
            "give the job 'permissions: pull-requests: write' and pass github-token.",
        )
      }
    },
  }
}

/** The GitHub App bot that a workflow's GITHUB_TOKEN writes as. */
export const ACTIONS_BOT = 'github-actions[bot]'

/**
 * The login github-token writes comments as: a personal token's user, else (an installation token,
 * which may not read /user) the Actions bot.
 */
async function ownLogin(octokit: Octokit): Promise<string> {
  try {
    const { data } = await octokit.rest.users.getAuthenticated()
    return data.login
  } catch (error) {
    const status = (error as { status?: unknown }).status
    if (status === 401 || status === 403) return ACTIONS_BOT
    throw error
  }
}

function describe(error: unknown): string {
  const status = (error as { status?: unknown }).status
  const message = error instanceof Error ? error.message : String(error)
  return typeof status === 'number' ? `${status} ${message}` : message
}
