// A preview deploy sweeps the other previews, so that no schedule is needed: before it adds one past
// max-previews (a freed domain makes room for its own), and as it ends. Both are bounded in time and
// never fail the deploy: the next sweep finishes one that stops.

import { openTransferRun } from '../api/run.ts'
import { errorMessage } from '../api/errors.ts'
import { plural } from '../common/format.ts'
import type { Logger } from '../common/logger.ts'
import { PREVIEW_SWEEP_BUDGET_MS } from '../common/timeouts.ts'
import { basicAuthorization } from '../inputs/basic-auth.ts'
import { targetNameId, type DeployInputs } from '../inputs/deploy.ts'
import { previewNumber } from '../inputs/previews.ts'
import { explainServiceFailure } from '../inputs/service-hints.ts'
import { sweepPreviews, type SweepGitHub, type SweptPreview } from './previews.ts'

export interface DeploySweep {
  inputs: DeployInputs
  /** The pull request this deploy previews. */
  pullRequest: number
  /** Undefined (no token, no repository): closed pull requests are not looked for. */
  github: SweepGitHub | undefined
  logger: Logger
  signal?: AbortSignal
  budgetMs?: number
}

/** The pull request whose preview namespace a publishing deploy targets (on a pull request's run, only its own). */
export function previewOfDeploy(inputs: DeployInputs, pullRequest: number | undefined): number | undefined {
  const { target } = inputs
  const nameId = targetNameId(target)
  if (inputs.dryRun || target.kind === 'none' || !target.publish || !nameId) return undefined
  const number = previewNumber(nameId, inputs.previews.prefix)
  return pullRequest === undefined || number === pullRequest ? number : undefined
}

/** Before the deploy: when its preview is new and would pass max-previews, the oldest are retired. */
export async function makeRoomForPreview(sweep: DeploySweep): Promise<void> {
  if (sweep.inputs.previews.maxPreviews === undefined) return
  await bounded(sweep, 'Make room for this preview (max-previews)', { incoming: true, onlyOverCap: true })
}

export function sweepOtherPreviews(sweep: DeploySweep): Promise<SweptPreview[] | undefined> {
  return bounded(sweep, 'Sweep the other previews', {})
}

async function bounded(
  sweep: DeploySweep,
  title: string,
  mode: { incoming?: boolean; onlyOverCap?: boolean },
): Promise<SweptPreview[] | undefined> {
  const { inputs, logger } = sweep
  const budgetMs = sweep.budgetMs ?? PREVIEW_SWEEP_BUDGET_MS
  const run = openTransferRun(
    inputs,
    {
      logger,
      signal: sweep.signal,
      deadlineMs: budgetMs + PREVIEW_SWEEP_BUDGET_MS,
      explain: explainServiceFailure,
    },
    'sweep of the other previews',
  )
  try {
    return await logger.group(title, async () => {
      const { connection, target } = inputs
      const { cdnDomain, basicAuth } = target.kind === 'none' ? {} : target
      const swept = await sweepPreviews(run, {
        gameId: connection.gameId,
        apiUrl: connection.apiUrl,
        cdnDomain,
        limits: inputs.previews,
        current: sweep.pullRequest,
        ...mode,
        dryRun: false,
        github: sweep.github,
        authorization: basicAuth && basicAuthorization(basicAuth),
        stopStartingAt: run.clock.now() + budgetMs,
        retire: {
          connection,
          cdnDomain,
          // A retired preview's page seen served within the budget; late, it only warns.
          verify: {
            ...inputs.verify,
            timeoutMs: Math.min(inputs.verify.timeoutMs, budgetMs),
            onFailure: 'warn',
          },
          transfer: inputs.transfer,
        },
      })
      logger.info(sweptLine(swept, sweep.github !== undefined))
      return swept
    })
  } catch (error) {
    logger.warning(
      `The sweep of the other previews stopped: ${errorMessage(error)}. The deploy is not affected; ` +
        "the next preview deploy's sweep (or the sweep action) finishes it.",
    )
    return undefined
  } finally {
    await run.dispose()
  }
}

function sweptLine(swept: readonly SweptPreview[], askedGitHub: boolean): string {
  const retired = swept.filter((p) => p.outcome === 'retired').map((p) => p.namespace)
  const deferred = swept.filter((p) => p.outcome === 'deferred').length
  const said = retired.length
    ? `Retired ${plural(retired.length, 'other preview')}: ${retired.join(', ')}`
    : 'No other preview to retire'
  return (
    said +
    (deferred ? `; ${deferred} left for the next sweep (this run's time for it is over)` : '') +
    (askedGitHub ? '' : '; closed pull requests were not looked for (no github-token or repository)')
  )
}
