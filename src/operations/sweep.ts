// The sweep: retires the previews whose pull requests are closed, for when the deploy's `closed` run
// never happened. It retires only what it can prove is a preview: a namespace named `<prefix><number>`
// whose site record (served at its own host) names the ref a deploy of that pull request builds. Any
// other (a release `v2` under prefix `v`, a preview without a record, a private one) is skipped, saying
// why. It asks GitHub (through the face) whether each pull request is open, and closes the closed ones'
// previews as the `closed` run does; a pull request GitHub cannot tell about fails the run at its end.

import { errorMessage } from '../api/errors.ts'
import type { NamespaceSummary } from '../api/types.ts'
import { table, text, type ReportBlock } from '../common/report.ts'
import type { Run } from '../api/run.ts'
import { closePreview, type CloseInputs, type CloseResult } from '../deploy/live/close.ts'
import { closedVersionName } from '../deploy/live/version-config.ts'
import { resolveCdnDomain } from '../deploy/target/cdn-domain.ts'
import { namespaceUrl, readVersion } from '../deploy/live/version-config.ts'
import { readServedRecord } from '../deploy/collect/record.ts'
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
import { nameIdProblems } from '../api/rules.ts'
import { INPUTS } from '../inputs/table.ts'
import type { Operation } from './operation.ts'
import { plural } from '../common/format.ts'

export interface SweepInputs extends Connection {
  /** Read by the face, which asks GitHub with it. */
  githubToken: string
  prefix: string
  dryRun: boolean
  cdnDomain: string | undefined
}

/** What GitHub says of a pull request; the head is for the face's own use (deployments, comment). */
export interface PullRequestState {
  open: boolean
  headRef?: string
  headSha?: string
}

export interface RetiredPreview {
  number: number
  pullRequest: PullRequestState
  result: CloseResult & { namespace: NamespaceSummary }
}

/** What the sweep asks of GitHub, through the face (the action's Octokit, the CLI's fetch). */
export interface SweepGitHub {
  /** The pull request's state; throws, saying why, when GitHub cannot tell. */
  pullRequest(number: number, signal: AbortSignal): Promise<PullRequestState>
  /** After a preview was retired: what GitHub shows of it (the comment, the deployments). Never throws. */
  retired?(preview: RetiredPreview): Promise<void>
}

/** Each one's words in the report. */
const OUTCOME_TEXT = {
  retired: 'closed: retired (the closed page, the domain freed)',
  'would-retire': 'closed: would be retired',
  open: 'open: left as it is',
  'already-retired': 'serves the closed page already: left as it is',
  undecided: 'unknown: left as it is',
  skipped: 'skipped: left as it is',
}
type SweepOutcome = keyof typeof OUTCOME_TEXT

interface SweptPreview {
  /** The namespace's name_id (`pr-12`). */
  namespace: string
  namespaceId: string
  number: number
  outcome: SweepOutcome
  /** Why GitHub could not tell (undecided), or why it is not known for a preview (skipped). */
  reason?: string
  domainRemoved?: string
}

export interface SweepResult {
  dryRun: boolean
  prefix: string
  /** Every namespace named <prefix><number>, by that number. */
  previews: SweptPreview[]
}

/** A prefix that makes valid name_ids with a number: 'pr-' (when empty too), 'preview-'. */
function readPrefix(get: GetInput): string {
  const prefix = readOptional(get, Input.NamespacePrefix) ?? INPUTS.NamespacePrefix.default
  if (nameIdProblems(`${prefix}1`).length)
    throw usage`{namespace-prefix} '${prefix}' cannot begin a namespace's name_id: use a-z and 0-9 with single dashes, ending with a dash or not (like 'pr-')`
  return prefix
}

function readSweepInputs(get: GetInput, options?: ReadOptions): SweepInputs {
  const connection = readRequiredConnection(get, options)
  const githubToken = readOptional(get, Input.GitHubToken)
  if (!githubToken)
    throw usage`{github-token} is required: the sweep asks GitHub whether each pull request is still open`
  return {
    ...connection,
    githubToken,
    prefix: readPrefix(get),
    dryRun: readBoolean(get, Input.DryRun),
    cdnDomain: readCdnDomain(get),
  }
}

/** The number a namespace's name gives after the prefix (`pr-12` -> 12). */
function previewNumber(nameId: string, prefix: string): number | undefined {
  if (!nameId.startsWith(prefix)) return undefined
  const digits = nameId.slice(prefix.length)
  return /^[1-9][0-9]{0,9}$/.test(digits) ? Number(digits) : undefined
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
      const gitHub = github(inputs)
      const { game } = await run.client.getGame(inputs.gameId)
      const previews = game.namespaces
        .map((namespace) => ({ namespace, number: previewNumber(namespace.name_id, inputs.prefix) }))
        .filter((p): p is { namespace: NamespaceSummary; number: number } => p.number !== undefined)
        .sort((a, b) => a.number - b.number)
      journal.push(`listed ${previews.length} namespaces named ${inputs.prefix}<number>`)
      run.logger.info(
        `${plural(previews.length, 'namespace')} named ${inputs.prefix}<number> in game ${game.name_id}`,
      )
      const cdnDomain = previews.length
        ? await resolveCdnDomain(run.client, inputs.cdnDomain, inputs.apiUrl, run.logger)
        : undefined
      const swept: SweptPreview[] = []
      for (const { namespace, number } of previews) {
        run.signal.throwIfAborted()
        const host = cdnDomain && namespaceUrl(cdnDomain, game.name_id, namespace.name_id)
        swept.push(await sweepOne(inputs, run, gitHub, { namespace, number, host }, journal))
      }
      return { dryRun: inputs.dryRun, prefix: inputs.prefix, previews: swept }
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

/** A namespace the prefix matched: its number, and the URL of its host (undefined: none known). */
interface Candidate {
  namespace: NamespaceSummary
  number: number
  host: string | undefined
}

/**
 * Why the namespace is not known for the preview of pull request `number`, or undefined when the
 * record its host serves names a ref a deploy of that pull request builds (event.ts).
 */
async function notProven(run: Run, { number, host }: Candidate): Promise<string | undefined> {
  const [ref, headRef] = [`refs/pull/${number}/merge`, `refs/pull/${number}/head`]
  if (!host)
    return `its host is unknown (the service names no CDN domain: set ${Input.CdnDomain}), so no record says it is a preview`
  const served = await readServedRecord(host, {
    dispatcher: run.dispatcher,
    signal: run.signal,
    stallMs: run.timeouts.stallMs,
  })
  if ('absent' in served)
    return `${host} serves no record of a build (${served.absent}), so nothing says it is the preview of pull request #${number}`
  const { record } = served
  if (record.ref === ref || record.ref === headRef) return undefined
  const built = record.ref === undefined ? 'names no ref' : `names ref ${record.ref}`
  return `its record ${built}, not ${ref}: it is no preview of pull request #${number}`
}

/** One namespace: skipped, left alone (retired already, open, undecided), or retired (or listed, in a dry run). */
async function sweepOne(
  inputs: SweepInputs,
  run: Run,
  github: SweepGitHub,
  candidate: Candidate,
  journal: string[],
): Promise<SweptPreview> {
  const { logger } = run
  const { namespace, number } = candidate
  const name = namespace.name_id
  const swept = { namespace: name, namespaceId: namespace.namespace_id, number }
  const current = await readVersion(run.client, inputs.gameId, namespace.version_id)
  if ([closedVersionName(name, number), closedVersionName(name, undefined)].includes(current.display_name)) {
    logger.info(`${name} already serves the closed page: left as it is`)
    return { ...swept, outcome: 'already-retired' }
  }
  const skipped = await notProven(run, candidate)
  if (skipped) {
    logger.info(`${name}: skipped, left as it is: ${skipped}`)
    return { ...swept, outcome: 'skipped', reason: skipped }
  }
  let pullRequest: PullRequestState
  try {
    pullRequest = await github.pullRequest(number, run.signal)
  } catch (error) {
    if (run.signal.aborted) throw error
    const reason = errorMessage(error)
    logger.warning(`${name}: could not tell whether pull request #${number} is open: ${reason}`)
    return { ...swept, outcome: 'undecided', reason }
  }
  if (pullRequest.open) {
    logger.info(`${name}: pull request #${number} is open: left as it is`)
    return { ...swept, outcome: 'open' }
  }
  if (inputs.dryRun) {
    logger.info(`${name}: pull request #${number} is closed: the sweep would retire its preview (dry run)`)
    return { ...swept, outcome: 'would-retire' }
  }
  logger.info(`${name}: pull request #${number} is closed: retiring its preview`)
  const result = await closePreview(await closeInputs(inputs, run, namespace), {
    logger,
    pullRequest: number,
    dispatcher: run.dispatcher,
    signal: run.signal,
  })
  if (!result.namespace || result.alreadyClosed) {
    // Retired meanwhile (a `closed` run at the same time): nothing more to do.
    return { ...swept, outcome: 'already-retired' }
  }
  journal.push(`retired ${name}`)
  await github.retired?.({ number, pullRequest, result: { ...result, namespace: result.namespace } })
  return { ...swept, outcome: 'retired', domainRemoved: result.domainRemoved }
}

/** The close of one preview namespace: the domain it holds is the one freed (the sweep has no domain input). */
async function closeInputs(inputs: SweepInputs, run: Run, namespace: NamespaceSummary): Promise<CloseInputs> {
  const { namespace: detail } = await run.client.getNamespace(inputs.gameId, namespace.namespace_id)
  const [domain, ...others] = detail.config.cdn.domains.map((entry) => entry.domain)
  if (others.length) {
    run.logger.warning(
      `${namespace.name_id} holds ${others.length + 1} domains: ${domain} is freed, ${others.join(', ')} kept ` +
        '(a deploy adds one domain to a preview)',
    )
  }
  return {
    connection: { apiUrl: inputs.apiUrl, token: inputs.token, gameId: inputs.gameId },
    target: {
      kind: 'id',
      namespaceId: namespace.namespace_id,
      nameId: namespace.name_id,
      versionId: undefined,
      domain,
      matchmaker: undefined,
      publish: false,
      cdnDomain: inputs.cdnDomain,
    },
    // The sweep has no verify or transfer inputs: their defaults, except that a slow edge only warns.
    verify: { ...readVerify(NONE_GIVEN), onFailure: 'warn' },
    transfer: readTransfer(NONE_GIVEN),
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
        p.reason ? `${OUTCOME_TEXT[p.outcome]} (${p.reason})` : OUTCOME_TEXT[p.outcome],
      ]),
    ),
  ]
  if (result.dryRun) blocks.push(text('Dry run: nothing was changed.'))
  return blocks
}
