// The sweep's core, for the sweep (action and CLI) and the end of each preview deploy. A preview is a
// namespace named `<prefix><number>` (or `<prefix><number>-<key>`) whose host serves a record naming a
// ref of that pull request; all namespaces of one number are retired together.
//
// When a preview was last deployed: the create_ts of the version its namespace serves. A deploy makes
// a version moments before it publishes it, the game's one listing gives every version's create_ts (no
// call per preview), and a run that publishes nothing new leaves it as it was.

import pLimit from 'p-limit'
import type { NamespaceSummary } from '../api/types.ts'
import type { Run } from '../api/run.ts'
import { plural } from '../common/format.ts'
import { errorMessage } from '../api/errors.ts'
import { hostOptionsOf, readServedRecord } from '../deploy/collect/record.ts'
import type { CloseResult, RetireReason } from '../deploy/live/close.ts'
import { closedVersionName, namespaceUrl, readVersion } from '../deploy/live/version-config.ts'
import { resolveCdnDomain } from '../deploy/target/cdn-domain.ts'
import { previewNumber, type PreviewLimits } from '../inputs/previews.ts'
import { Input } from '../inputs/constants.ts'
import { inputName } from '../common/input-naming.ts'
import { entry, retireGroups, type RetireSettings } from './retire.ts'

/** The head is for the face's own use (deployments, comment). */
export interface PullRequestState {
  open: boolean
  headRef?: string
  headSha?: string
}

/** What the sweep asks of GitHub, through the face (the action's client, the CLI's fetch). */
export interface SweepGitHub {
  /** Throws, saying why, when GitHub cannot tell. */
  pullRequest(number: number, signal: AbortSignal): Promise<PullRequestState>
  /** One listing, so that an open one costs no call of its own; one missing from it is asked about alone. */
  openPullRequests?(signal: AbortSignal): Promise<Map<number, PullRequestState>>
  /** After a preview was retired: what GitHub shows of it (the comment, the deployments). Never throws. */
  retired?(preview: RetiredPreview): Promise<void>
}

export interface RetiredPreview {
  number: number
  pullRequest: PullRequestState
  reason: RetireReason
  result: CloseResult & { namespace: NamespaceSummary }
}

export type SweepOutcome =
  | 'retired'
  | 'would-retire'
  | 'open'
  | 'kept'
  | 'current'
  | 'already-retired'
  | 'undecided'
  | 'skipped'
  | 'deferred'

export interface SweptPreview {
  /** The namespace's name_id (`pr-12`, `pr-12-game`). */
  namespace: string
  namespaceId: string
  number: number
  outcome: SweepOutcome
  /** Why GitHub could not tell (undecided), why it is no known preview (skipped), why it waits (deferred). */
  reason?: string
  retiredBecause?: RetireReason
  lastDeployedMs?: number
  domainRemoved?: string
}

export interface PreviewSweep {
  gameId: string
  apiUrl: string
  cdnDomain: string | undefined
  limits: PreviewLimits
  /** The pull request this run deploys: never retired by it, and counted as live. */
  current?: number
  /** The current pull request's preview is about to go live: counted even if it is not yet. */
  incoming?: boolean
  /** Only when one more preview would pass max-previews (the deploy's check before it adds one). */
  onlyOverCap?: boolean
  dryRun: boolean
  /** Undefined: closed pull requests are not looked for, only age and cap. */
  github: SweepGitHub | undefined
  /** For the records of private previews: the deploy's own basic auth. */
  authorization?: string
  /** From this instant (run.clock) no retirement starts: the rest waits for the next sweep. */
  stopStartingAt?: number
  retire: RetireSettings
  journal?: string[]
}

/** A namespace of a preview's name that does not serve the closed page. */
interface Candidate {
  namespace: NamespaceSummary
  number: number
  host: string | undefined
  lastDeployedMs: number
}

/** A pull request's live previews, proven by their records. */
export interface PreviewGroup {
  number: number
  candidates: Candidate[]
  lastDeployedMs: number
}

/** A pull request's state, or why GitHub could not tell; undefined: not asked (no GitHub, or current). */
export type StateOf = PullRequestState | { undecided: string } | undefined

const RECORDS_AT_ONCE = 8

export async function sweepPreviews(run: Run, sweep: PreviewSweep): Promise<SweptPreview[]> {
  const { game } = await run.client.getGame(sweep.gameId)
  const named = game.namespaces
    .map((namespace) => ({ namespace, number: previewNumber(namespace.name_id, sweep.limits.prefix) }))
    .filter((p): p is { namespace: NamespaceSummary; number: number } => p.number !== undefined)
    .sort((a, b) => a.number - b.number || a.namespace.name_id.localeCompare(b.namespace.name_id))
  sweep.journal?.push(`listed ${named.length} namespaces named ${sweep.limits.prefix}<number>`)
  run.logger.info(
    `${plural(named.length, 'namespace')} named ${sweep.limits.prefix}<number> in game ${game.name_id}`,
  )
  const versions = new Map(game.versions.map((v) => [v.version_id, v]))
  const swept: SweptPreview[] = []
  const live: Array<Omit<Candidate, 'host'>> = []
  for (const { namespace, number } of named) {
    const served =
      versions.get(namespace.version_id) ??
      (await readVersion(run.client, sweep.gameId, namespace.version_id))
    const name = namespace.name_id
    if ([closedVersionName(name, number), closedVersionName(name, undefined)].includes(served.display_name)) {
      run.logger.info(`${name} already serves the closed page: left as it is`)
      swept.push({ ...entry(namespace, number), outcome: 'already-retired' })
    } else live.push({ namespace, number, lastDeployedMs: Date.parse(served.create_ts) })
  }
  if (sweep.onlyOverCap && !wouldPassCap(live, sweep)) return []
  const cdnDomain = live.length
    ? await resolveCdnDomain(run.client, sweep.cdnDomain, sweep.apiUrl, run.logger)
    : undefined
  const candidates = live.map((c) => ({
    ...c,
    host: cdnDomain && namespaceUrl(cdnDomain, game.name_id, c.namespace.name_id),
  }))
  const groups = await provenGroups(run, sweep, candidates, swept)
  const states = await pullRequestStates(run, sweep, groups)
  const decided = decide(run, sweep, groups, states)
  swept.push(...(await retireGroups(run, sweep, groups, states, decided)))
  return swept.sort((a, b) => a.number - b.number || a.namespace.localeCompare(b.namespace))
}

/** Whether one more pull request's preview would pass the cap (before any record is read). */
function wouldPassCap(live: ReadonlyArray<{ number: number }>, sweep: PreviewSweep): boolean {
  const { maxPreviews } = sweep.limits
  if (maxPreviews === undefined) return false
  const numbers = new Set(live.map((c) => c.number))
  if (sweep.current !== undefined && numbers.has(sweep.current)) return false
  return numbers.size + 1 > maxPreviews
}

/** The candidates whose record proves them previews, by pull request; the others are skipped, saying why. */
async function provenGroups(
  run: Run,
  sweep: PreviewSweep,
  candidates: Candidate[],
  swept: SweptPreview[],
): Promise<PreviewGroup[]> {
  const limit = pLimit(RECORDS_AT_ONCE)
  const proofs = await Promise.all(candidates.map((c) => limit(() => notProven(run, sweep, c))))
  const groups = new Map<number, PreviewGroup>()
  candidates.forEach((candidate, index) => {
    const skipped = proofs[index]
    const { namespace, number } = candidate
    if (skipped) {
      run.logger.info(`${namespace.name_id}: skipped, left as it is: ${skipped}`)
      swept.push({ ...entry(namespace, number), outcome: 'skipped', reason: skipped })
      return
    }
    const group = groups.get(number) ?? { number, candidates: [], lastDeployedMs: 0 }
    group.candidates.push(candidate)
    group.lastDeployedMs = Math.max(group.lastDeployedMs, candidate.lastDeployedMs)
    groups.set(number, group)
  })
  return [...groups.values()]
}

/** Why the namespace is not known as the preview of pull request `number`; undefined when its record says it is. */
async function notProven(run: Run, sweep: PreviewSweep, { number, host }: Candidate) {
  const [ref, headRef] = [`refs/pull/${number}/merge`, `refs/pull/${number}/head`]
  if (!host)
    return `its host is unknown (the service names no CDN domain: set ${inputName(Input.CdnDomain)}), so no record says it is a preview`
  const served = await readServedRecord(host, hostOptionsOf(run, sweep.authorization))
  if ('absent' in served)
    return `${host} serves no record of a build (${served.absent}), so nothing says it is the preview of pull request #${number}`
  const { record } = served
  if (record.ref === ref || record.ref === headRef) return undefined
  const built = record.ref === undefined ? 'names no ref' : `names ref ${record.ref}`
  return `its record ${built}, not ${ref}: it is no preview of pull request #${number}`
}

/** Each pull request but the current one: one listing, then a call for each not in it. */
async function pullRequestStates(
  run: Run,
  sweep: PreviewSweep,
  groups: readonly PreviewGroup[],
): Promise<Map<number, StateOf>> {
  const states = new Map<number, StateOf>()
  const { github } = sweep
  const asked = groups.filter((g) => g.number !== sweep.current)
  if (!github || !asked.length) return states
  let open: Map<number, PullRequestState> | undefined
  if (github.openPullRequests) {
    try {
      open = await github.openPullRequests(run.signal)
    } catch (error) {
      if (run.signal.aborted) throw error
      run.logger.info(`Could not list the open pull requests (${errorMessage(error)}): asking one by one`)
    }
  }
  for (const { number } of asked) {
    try {
      states.set(number, open?.get(number) ?? (await github.pullRequest(number, run.signal)))
    } catch (error) {
      if (run.signal.aborted) throw error
      states.set(number, { undecided: errorMessage(error) })
    }
  }
  return states
}

/** Which pull requests' previews are retired, and why: closed first, then too old, then past the cap. */
function decide(
  run: Run,
  sweep: PreviewSweep,
  groups: readonly PreviewGroup[],
  states: ReadonlyMap<number, StateOf>,
): Map<number, RetireReason> {
  const decided = new Map<number, RetireReason>()
  const others = groups.filter((g) => g.number !== sweep.current)
  const now = run.clock.now()
  const { ttlMs, maxPreviews } = sweep.limits
  for (const group of others) {
    const state = states.get(group.number)
    const ageMs = now - group.lastDeployedMs
    if (state && 'open' in state && !state.open) decided.set(group.number, { kind: 'closed' })
    else if (ttlMs !== undefined && ageMs > ttlMs)
      decided.set(group.number, { kind: 'expired', ageMs, ttlMs })
  }
  if (maxPreviews === undefined) return decided
  const remaining = groups.filter((g) => !decided.has(g.number))
  const currentLive = remaining.some((g) => g.number === sweep.current)
  const live = remaining.length + (sweep.incoming && !currentLive ? 1 : 0)
  const oldestFirst = remaining
    .filter((g) => g.number !== sweep.current)
    .sort((a, b) => a.lastDeployedMs - b.lastDeployedMs || a.number - b.number)
  for (const group of oldestFirst.slice(0, Math.max(0, live - maxPreviews))) {
    const ageMs = now - group.lastDeployedMs
    decided.set(group.number, { kind: 'over-cap', ageMs, maxPreviews, live })
  }
  return decided
}
