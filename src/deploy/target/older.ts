// Never an older build over a newer one: the commit the namespace's record names is compared with
// this run's (GitHub's compare API). Another branch's commit (diverged) is published as always.

import { errorMessage } from '../../api/errors.ts'
import type { Logger } from '../../common/logger.ts'
import { Input } from '../../inputs/constants.ts'
import type { SiteRecord } from '../collect/record.ts'
import { inputAssignment, inputName } from '../../common/input-naming.ts'

export type CommitStatus = 'ahead' | 'behind' | 'diverged' | 'identical'

/** GET /repos/{owner}/{repo}/compare/{base}...{head}; undefined when GitHub does not know. */
export type CompareCommits = (base: string, head: string) => Promise<CommitStatus | undefined>

export interface OlderCheck {
  /** This run's commit is behind the live one, and allow-older is off; or the preview was closed meanwhile. */
  blocked: boolean
  /** The namespace was given its closed page while this run ran (meanwhile.ts). */
  closed?: boolean
  liveCommit?: string
  status?: CommitStatus
  reason: string
  /** Set by the pipeline. */
  url?: string
}

type Found = Omit<OlderCheck, 'reason' | 'blocked'>

interface OlderCheckOptions {
  commit: string | undefined
  live: { record: Pick<SiteRecord, 'commit'> } | { absent: string }
  nameId: string
  allowOlder: boolean
  compareCommits: CompareCommits | undefined
  logger: Pick<Logger, 'info' | 'warning'>
}

/** Whether this run may publish over what the namespace serves; said in the log either way. */
export async function checkOlder(options: OlderCheckOptions): Promise<OlderCheck> {
  const { commit, live, nameId, logger } = options
  const said = (reason: string, found: Found = {}, warn = false, blocked = false): OlderCheck => {
    if (warn) logger.warning(reason, { title: 'Older commit' })
    else logger.info(reason)
    return { blocked, reason, ...found }
  }
  if ('absent' in live)
    return said(`Namespace ${nameId} serves no record of a build (${live.absent}): nothing to compare with`)
  const liveCommit = live.record.commit
  const serves = `Namespace ${nameId} serves commit ${liveCommit && short(liveCommit)}`
  if (!liveCommit || !commit) {
    const why = liveCommit ? 'this run knows no commit' : 'its record names no commit'
    return said(`Not compared with what namespace ${nameId} serves: ${why}`, { liveCommit })
  }
  if (liveCommit === commit) return said(`${serves}, this run's`, { liveCommit, status: 'identical' })
  if (!options.compareCommits) {
    const reason = `${serves}; whether ${short(commit)} is older could not be checked (no GitHub token or repository): it is published`
    return said(reason, { liveCommit }, true)
  }
  let status: CommitStatus | undefined
  try {
    status = await options.compareCommits(liveCommit, commit)
  } catch (error) {
    const reason = `${serves}; GitHub could not compare it with ${short(commit)} (${errorMessage(error)}): it is published`
    return said(reason, { liveCommit }, true)
  }
  const found = { liveCommit, status }
  if (status !== 'behind') {
    const reason = `${serves}; this run's ${short(commit)} is ${status ?? 'unknown to GitHub'} of it: it is published`
    return said(reason, found)
  }
  const newer = `${serves}, newer than this run's ${short(commit)}`
  if (options.allowOlder)
    return said(`${newer}: published all the same (${inputName(Input.AllowOlder)} is true)`, found, true)
  const reason =
    `${newer}: nothing was published, it still serves ${short(liveCommit)}. Set ${inputAssignment(Input.AllowOlder, 'true')} ` +
    'to publish an older commit on purpose (or use the publish action to roll back)'
  return said(reason, found, true, true)
}

function short(commit: string): string {
  return /^[0-9a-f]{40,64}$/i.test(commit) ? commit.slice(0, 7) : commit
}
