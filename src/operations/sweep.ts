// The sweep action and command, for a schedule or by hand (each preview deploy runs the same sweep as it
// ends: preview-sweep.ts). It retires only what its record proves a preview (previews.ts): a release
// `v2` under prefix `v` is skipped, saying why. A pull request GitHub cannot tell about fails the run.

import { table, text, type ReportBlock } from '../common/report.ts'
import { retiredBecause } from '../deploy/live/close.ts'
import {
  readBoolean,
  readCdnDomain,
  readOptional,
  readRequiredConnection,
  readVerify,
  usage,
  type Connection,
  type GetInput,
  type ReadOptions,
} from '../inputs/common.ts'
import { ActionName, Input, SweepOutput } from '../inputs/constants.ts'
import { readTransfer } from '../inputs/deploy.ts'
import { readPreviewLimits, type PreviewLimits } from '../inputs/previews.ts'
import type { Operation } from './operation.ts'
import { plural } from '../common/format.ts'
import { sweepPreviews, type SweepGitHub, type SweepOutcome, type SweptPreview } from './previews.ts'

interface SweepInputs extends Connection {
  githubToken: string
  limits: PreviewLimits
  dryRun: boolean
  cdnDomain: string | undefined
}

const OUTCOME_TEXT: Record<Exclude<SweepOutcome, 'retired' | 'would-retire'>, string> = {
  open: 'open: left as it is',
  kept: 'left as it is',
  current: "this run's pull request: left as it is",
  'already-retired': 'serves the closed page already: left as it is',
  undecided: 'unknown: left as it is',
  skipped: 'skipped: left as it is',
  deferred: 'left for the next sweep',
}

export interface SweepResult {
  dryRun: boolean
  prefix: string
  previews: SweptPreview[]
}

function readSweepInputs(get: GetInput, options?: ReadOptions): SweepInputs {
  const connection = readRequiredConnection(get, options)
  const githubToken = readOptional(get, Input.GitHubToken)
  if (!githubToken)
    throw usage`{github-token} is required: the sweep asks GitHub whether each pull request is still open`
  return {
    ...connection,
    githubToken,
    limits: readPreviewLimits(get),
    dryRun: readBoolean(get, Input.DryRun),
    cdnDomain: readCdnDomain(get),
  }
}

export function sweepOperation(
  github: (inputs: SweepInputs) => SweepGitHub,
): Operation<SweepInputs, SweepResult> {
  return {
    name: ActionName.Sweep,
    read: readSweepInputs,
    stoppedNote:
      'The previews it names as retired serve the closed page; the others were left as they were: run the sweep again to finish.',

    async run(inputs, run, journal) {
      const previews = await sweepPreviews(run, {
        gameId: inputs.gameId,
        apiUrl: inputs.apiUrl,
        cdnDomain: inputs.cdnDomain,
        limits: inputs.limits,
        dryRun: inputs.dryRun,
        github: github(inputs),
        journal,
        retire: {
          connection: { apiUrl: inputs.apiUrl, token: inputs.token, gameId: inputs.gameId },
          cdnDomain: inputs.cdnDomain,
          // The sweep has no verify or transfer inputs: their defaults, except that a slow edge only warns.
          verify: { ...readVerify(NONE_GIVEN), onFailure: 'warn' },
          transfer: readTransfer(NONE_GIVEN),
        },
      })
      return { dryRun: inputs.dryRun, prefix: inputs.limits.prefix, previews }
    },

    outputs(result) {
      return { [SweepOutput.Retired]: namesOf(result, 'retired') }
    },

    report(result) {
      return { title: reportTitle(result), blocks: reportBlocks(result) }
    },

    failure(result) {
      const undecided = result.previews.filter((p) => p.outcome === 'undecided')
      if (!undecided.length) return undefined
      const each = undecided.map((p) => `${p.namespace} (#${p.number}): ${p.reason ?? 'unknown'}`).join('; ')
      return new Error(
        (undecided.length === 1
          ? 'Could not tell whether 1 pull request is open, so its preview was left as it is: '
          : `Could not tell whether ${undecided.length} pull requests are open, so their previews were left as they are: `) +
          each,
      )
    },
  }
}

const NONE_GIVEN = () => ''

function namesOf(result: SweepResult, outcome: SweepOutcome): string[] {
  return result.previews.filter((p) => p.outcome === outcome).map((p) => p.namespace)
}

function reportTitle(result: SweepResult): string {
  if (result.dryRun)
    return `gamehost sweep (dry run): would retire ${plural(namesOf(result, 'would-retire').length, 'preview')}`
  return `gamehost sweep: retired ${plural(namesOf(result, 'retired').length, 'preview')}`
}

function reportBlocks(result: SweepResult): ReportBlock[] {
  if (!result.previews.length)
    return [text(`The game has no preview namespace (named ${result.prefix}<pull request number>).`)]
  const blocks: ReportBlock[] = [
    table(
      ['Namespace', 'Pull request', 'State'],
      result.previews.map((p) => [
        { code: p.namespace },
        p.outcome === 'skipped' ? '' : `#${p.number}`,
        stateText(p),
      ]),
    ),
  ]
  if (result.dryRun) blocks.push(text('Dry run: nothing was changed.'))
  return blocks
}

function stateText(p: SweptPreview): string {
  if (p.outcome === 'retired' || p.outcome === 'would-retire') {
    const why = p.retiredBecause?.kind === 'closed' ? 'closed' : retiredBecause(p.retiredBecause!, p.number)
    return p.outcome === 'retired'
      ? `${why}: retired (the closed page, the domain freed)`
      : `${why}: would be retired`
  }
  return p.reason ? `${OUTCOME_TEXT[p.outcome]} (${p.reason})` : OUTCOME_TEXT[p.outcome]
}
