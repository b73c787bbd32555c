// Never an older build over a newer one: before publishing to a namespace, the commit its record
// names is compared with this run's (GitHub's compare API, through the function the face hands in).
// When this run's commit is behind it, nothing is published unless allow-older says so. Another
// branch's commit (diverged) is published as always: only history says what is older.

import { errorMessage } from '../api/errors.ts'
import type { Logger } from '../common/logger.ts'
import { Input } from '../inputs/constants.ts'
import type { SiteRecord } from './site-record.ts'
import { inputAssignment, inputName } from '../common/input-naming.ts'

/** How `head` stands to `base` in the repository's history, as GitHub's compare API says it. */
export type CommitStatus = 'ahead' | 'behind' | 'diverged' | 'identical'

/**
 * Compares two commits of the run's repository (GET /repos/{owner}/{repo}/compare/{base}...{head}):
 * undefined when GitHub does not know (a commit it does not have). Handed in by the action; the CLI
 * hands one in when GITHUB_TOKEN and GITHUB_REPOSITORY are set.
 */
export type CompareCommits = (base: string, head: string) => Promise<CommitStatus | undefined>

/** What the guard found: whether to publish, and why. */
export interface OlderCheck {
  /** Publish nothing: this run's commit is behind the live one, and allow-older is off. */
  blocked: boolean
  /** The commit the namespace serves, by its record; undefined when it serves none. */
  liveCommit?: string
  status?: CommitStatus
  /** One sentence: what was compared and what follows. */
  reason: string
  /** The namespace's URL, which serves the live build (set by the pipeline). */
  url?: string
}

export interface OlderCheckOptions {
  /** This run's commit; undefined when the face knows none. */
  commit: string | undefined
  /** What the namespace serves, or why nothing is known. */
  live: { record: SiteRecord } | { absent: string }
  nameId: string
  allowOlder: boolean
  compareCommits: CompareCommits | undefined
  logger: Pick<Logger, 'info' | 'warning'>
}

/** Whether this run may publish over what the namespace serves; said in the log either way. */
export async function checkOlder(options: OlderCheckOptions): Promise<OlderCheck> {
  const { commit, live, nameId, logger } = options
  const said = (check: OlderCheck, warn = false): OlderCheck => {
    if (warn) logger.warning(check.reason, { title: 'Older commit' })
    else logger.info(check.reason)
    return check
  }
  if ('absent' in live)
    return said({
      blocked: false,
      reason: `Namespace ${nameId} serves no record of a build (${live.absent}): nothing to compare with`,
    })
  const liveCommit = live.record.commit
  if (!liveCommit || !commit)
    return said({
      blocked: false,
      liveCommit,
      reason: `Not compared with what namespace ${nameId} serves: ${liveCommit ? 'this run knows no commit' : 'its record names no commit'}`,
    })
  if (liveCommit === commit)
    return said({
      blocked: false,
      liveCommit,
      status: 'identical',
      reason: `Namespace ${nameId} serves commit ${short(commit)}, this run's`,
    })
  if (!options.compareCommits)
    return said(
      {
        blocked: false,
        liveCommit,
        reason:
          `Namespace ${nameId} serves commit ${short(liveCommit)}; whether ${short(commit)} is older could not be checked ` +
          '(no GitHub token or repository): it is published',
      },
      true,
    )
  let status: CommitStatus | undefined
  try {
    status = await options.compareCommits(liveCommit, commit)
  } catch (error) {
    return said(
      {
        blocked: false,
        liveCommit,
        reason: `Namespace ${nameId} serves commit ${short(liveCommit)}; GitHub could not compare it with ${short(commit)} (${errorMessage(error)}): it is published`,
      },
      true,
    )
  }
  if (status !== 'behind')
    return said({
      blocked: false,
      liveCommit,
      status,
      reason: `Namespace ${nameId} serves commit ${short(liveCommit)}; this run's ${short(commit)} is ${status ?? 'unknown to GitHub'} of it: it is published`,
    })
  if (options.allowOlder)
    return said(
      {
        blocked: false,
        liveCommit,
        status,
        reason: `Namespace ${nameId} serves commit ${short(liveCommit)}, newer than this run's ${short(commit)}: published all the same (${inputName(Input.AllowOlder)} is true)`,
      },
      true,
    )
  return said(
    {
      blocked: true,
      liveCommit,
      status,
      reason:
        `Namespace ${nameId} serves commit ${short(liveCommit)}, newer than this run's ${short(commit)}: nothing was published, ` +
        `it still serves ${short(liveCommit)}. Set ${inputAssignment(Input.AllowOlder, 'true')} to publish an older commit on purpose (or use the publish action to roll back)`,
    },
    true,
  )
}

function short(commit: string): string {
  return /^[0-9a-f]{40,64}$/i.test(commit) ? commit.slice(0, 7) : commit
}
