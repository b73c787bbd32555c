// Retiring what the sweep decided (previews.ts), each namespace as the `closed` run closes one, then
// what GitHub shows of it. Past the run's time bound no retirement starts: the next sweep does it.

import type { NamespaceSummary } from '../api/types.ts'
import type { Run } from '../api/run.ts'
import { closePreview, retiredBecause, type CloseInputs, type RetireReason } from '../deploy/live/close.ts'
import type { Connection, VerifySettings } from '../inputs/common.ts'
import type { Transfer } from '../inputs/deploy.ts'
import type { PreviewGroup, PreviewSweep, PullRequestState, StateOf, SweptPreview } from './previews.ts'

export interface RetireSettings {
  connection: Connection
  cdnDomain: string | undefined
  verify: VerifySettings
  transfer: Transfer
}

export async function retireGroups(
  run: Run,
  sweep: PreviewSweep,
  groups: readonly PreviewGroup[],
  states: ReadonlyMap<number, StateOf>,
  decided: ReadonlyMap<number, RetireReason>,
): Promise<SweptPreview[]> {
  const swept: SweptPreview[] = []
  for (const group of groups) {
    const reason = decided.get(group.number)
    const state = states.get(group.number)
    if (!reason) {
      swept.push(...group.candidates.map((c) => leftAlone(run, sweep, c.namespace, group.number, state)))
      continue
    }
    const late = sweep.stopStartingAt !== undefined && run.clock.now() >= sweep.stopStartingAt
    for (const { namespace, lastDeployedMs } of group.candidates) {
      run.signal.throwIfAborted()
      const base = { ...entry(namespace, group.number), lastDeployedMs, retiredBecause: reason }
      if (late) {
        const waits = "left for the next sweep: this run's time for retiring previews is over"
        run.logger.info(`${namespace.name_id}: ${waits}`)
        swept.push({ ...base, outcome: 'deferred', reason: waits })
        continue
      }
      run.logger.info(retiringLine(namespace.name_id, group.number, reason, sweep.dryRun))
      if (sweep.dryRun) swept.push({ ...base, outcome: 'would-retire' })
      else swept.push({ ...base, ...(await retireOne(run, sweep, namespace, group.number, reason, state)) })
    }
  }
  return swept
}

function leftAlone(
  run: Run,
  sweep: PreviewSweep,
  namespace: NamespaceSummary,
  number: number,
  state: StateOf,
): SweptPreview {
  const name = namespace.name_id
  const base = entry(namespace, number)
  if (number === sweep.current) return { ...base, outcome: 'current' }
  if (state && 'undecided' in state) {
    run.logger.warning(`${name}: could not tell whether pull request #${number} is open: ${state.undecided}`)
    return { ...base, outcome: 'undecided', reason: state.undecided }
  }
  if (state?.open) {
    run.logger.info(`${name}: pull request #${number} is open: left as it is`)
    return { ...base, outcome: 'open' }
  }
  return { ...base, outcome: 'kept' }
}

async function retireOne(
  run: Run,
  sweep: PreviewSweep,
  namespace: NamespaceSummary,
  number: number,
  reason: RetireReason,
  state: StateOf,
): Promise<Pick<SweptPreview, 'outcome' | 'domainRemoved' | 'reason' | 'retiredBecause'>> {
  const result = await closePreview(await closeInputs(sweep.retire, run, namespace), {
    logger: run.logger,
    pullRequest: number,
    reason,
    // What was decided on holds only while it serves what was read: a deploy of it meanwhile keeps it.
    onlyIfServing: namespace.version_id,
    dispatcher: run.dispatcher,
    signal: run.signal,
  })
  if (result.deployedMeanwhile)
    return { outcome: 'kept', reason: 'it was deployed meanwhile', retiredBecause: undefined }
  // Retired meanwhile (a `closed` run at the same time): nothing more to do.
  if (!result.namespace || result.alreadyClosed) return { outcome: 'already-retired' }
  sweep.journal?.push(`retired ${namespace.name_id}`)
  const pullRequest: PullRequestState = state && 'open' in state ? state : { open: reason.kind !== 'closed' }
  await sweep.github?.retired?.({
    number,
    pullRequest,
    reason,
    result: { ...result, namespace: result.namespace },
  })
  return { outcome: 'retired', domainRemoved: result.domainRemoved }
}

/** The domain the namespace holds is the one freed (the sweep has no domain input). */
async function closeInputs(
  settings: RetireSettings,
  run: Run,
  namespace: NamespaceSummary,
): Promise<CloseInputs> {
  const { gameId } = settings.connection
  const { namespace: detail } = await run.client.getNamespace(gameId, namespace.namespace_id)
  const [domain, ...others] = detail.config.cdn.domains.map((entry) => entry.domain)
  if (others.length) {
    run.logger.warning(
      `${namespace.name_id} holds ${others.length + 1} domains: ${domain} is freed, ${others.join(', ')} kept ` +
        '(a deploy adds one domain to a preview)',
    )
  }
  return {
    connection: settings.connection,
    target: {
      kind: 'id',
      namespaceId: namespace.namespace_id,
      nameId: namespace.name_id,
      versionId: undefined,
      domain,
      matchmaker: undefined,
      publish: false,
      cdnDomain: settings.cdnDomain,
    },
    verify: settings.verify,
    transfer: settings.transfer,
  }
}

export function entry(namespace: NamespaceSummary, number: number) {
  return { namespace: namespace.name_id, namespaceId: namespace.namespace_id, number }
}

function retiringLine(name: string, number: number, reason: RetireReason, dryRun: boolean): string {
  const why = reason.kind === 'closed' ? `pull request #${number} is closed` : retiredBecause(reason, number)
  return `${name}: ${why}: ${dryRun ? 'the sweep would retire its preview (dry run)' : 'retiring its preview'}`
}
