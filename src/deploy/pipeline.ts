import path from 'node:path'
import { formatBytes, messageOf, plural } from '../common/format.ts'
import type { Logger } from '../common/logger.ts'
import { openTransferRun, type Run, type RunOptions } from '../api/run.ts'
import { basicAuthorization } from '../inputs/basic-auth.ts'
import { hasTarget, targetNameId, type DeployInputs, type TargetedInputs } from '../inputs/deploy.ts'
import { collectSite, type CollectedSite } from './collect/collect.ts'
import type { OpenFile } from './collect/read.ts'
import { buildManifest, writeManifest, type Manifest } from './collect/files.ts'
import { prepareVersion, type Published } from './live/prepare.ts'
import { privateHostWaiter } from './target/private.ts'
import type { Provisioned } from './target/provision.ts'
import { planTarget, type PublishPlan } from './target/target.ts'
import type { UploadResult } from './upload/upload.ts'
import { uploadSite } from './upload/site.ts'
import { publishAndSee } from './live/publish-and-see.ts'
import { recheckOlder } from './live/meanwhile.ts'
import type { PollOptions, Verification } from './live/verify.ts'
import { chooseBrowser, smokeTest, type ChosenBrowser, type SmokeResult } from './smoke/index.ts'
import { checkOlder, type CompareCommits, type OlderCheck } from './target/older.ts'
import { namespaceUrl } from './live/version-config.ts'
import { hostOptionsOf, readServedRecord, type BuildSource, type RecordFile } from './collect/record.ts'
import type { SiteRecord } from './collect/record.ts'
import { compareSizes, sizeSummary, type SizeChange } from './sizes.ts'
import { cdnRoutes, type ServingPlan } from './collect/web-engine.ts'
import { explainServiceFailure } from '../inputs/service-hints.ts'
import { hashArtifacts } from './collect/hash.ts'
import { lookForReviewedBuild, type ReviewedBytes, type ReviewedOutcome } from './target/reviewed.ts'

export interface DeployResult {
  dryRun: boolean
  /** The files equal the last completed site of this preview: no site was created, siteId is that one. */
  skipped: boolean
  siteName: string
  siteId?: string
  uploadId?: string
  provisioned: Provisioned
  manifest?: Manifest
  manifestPath?: string
  upload?: UploadResult
  /** The upload was completed (or the site is the reused, unchanged one). */
  uploadCompleted: boolean
  published?: Published
  /** Requests a dry run expects: one per file, as the service answers for CDN sites. */
  plannedParts: number
  durationMs: number
  serving?: ServingPlan
  /** Known before any file is hashed: a run that fails before its manifest exists still reports them. */
  collected?: { fileCount: number; totalBytes: number; hidden?: string[] }
  verification?: Verification
  smoke?: SmokeResult
  record?: Pick<RecordFile, 'path' | 'size' | 'sha256' | 'contentType'>
  older?: OlderCheck
  sizes?: SizeChange
  /** reuse-reviewed: the namespace whose served build this is (its site published, nothing uploaded), or why none. */
  reviewed?: ReviewedBytes | { unmatched: string }
}

export interface PreviousSite {
  siteId?: string
  uploadId?: string
  digest?: string
  commit?: string
}

export interface DeployDependencies extends Pick<
  RunOptions,
  'logger' | 'retry' | 'dispatcher' | 'signal' | 'deadlineMs' | 'clock' | 'timer'
> {
  /** Where the manifest file goes (RUNNER_TEMP in the action). */
  tempDir: string
  manifestFile?: string
  /** tempDir is removed when the run ends (the CLI's): a manifest there is not said to be anywhere. */
  tempDirRemoved?: boolean
  progressIntervalMs?: number
  /** skip-unchanged: the last completed site of this preview. */
  previous?: PreviousSite
  onNamespace?: (namespaceId: string) => void
  open?: OpenFile
  sleep?: PollOptions['sleep']
  source?: BuildSource
  /** Without it the guard against an older build cannot run, and says so. */
  compareCommits?: CompareCommits
  /** Once every local check has passed, before anything is created (a preview's room made under max-previews). */
  beforeCreating?: () => Promise<void>
}

/** A failure past the local checks, with what was done before (`partial`); local checks throw as they are. */
export class DeployError extends Error {
  override name = 'DeployError'
  readonly partial: DeployResult
  constructor(cause: unknown, partial: DeployResult) {
    super(messageOf(cause), { cause })
    this.partial = partial
  }
}

export function deployFailure(error: unknown): { error: unknown; partial: DeployResult | undefined } {
  return error instanceof DeployError
    ? { error: error.cause, partial: error.partial }
    : { error, partial: undefined }
}

/** Every local check passes before anything is created; the result is written here alone. */
export async function deploy(inputs: DeployInputs, deps: DeployDependencies): Promise<DeployResult> {
  const { logger } = deps
  // Its pool and client are made on first use: a dry run or a failed local check makes neither.
  const run = openTransferRun(inputs, { ...deps, explain: explainServiceFailure }, 'deploy')
  const started = run.clock.now()
  const finished = (result: DeployResult) => Object.assign(result, { durationMs: run.clock.now() - started })
  try {
    const browser = await chooseBrowser(inputs)
    const site = await collect(inputs, { ...deps, signal: run.signal })
    run.signal.throwIfAborted()
    const result = startResult(inputs, site)
    const saveManifest = manifestSaver(result, deps)
    if (site?.manifest) await saveManifest(site.manifest)
    if (inputs.dryRun) {
      await logger.group('Plan (dry run: nothing is created)', () =>
        Promise.resolve(logPlan(inputs, result, logger)),
      )
      return finished(result)
    }
    const onNamespace = (id: string) => {
      result.provisioned.namespaceId = id
      deps.onNamespace?.(id)
    }
    try {
      await deps.beforeCreating?.()
      run.signal.throwIfAborted()
      await sendAndGoLive(
        { inputs, run, result, deps: { ...deps, saveManifest, onNamespace, browser } },
        site,
      )
    } catch (error) {
      throw new DeployError(error, finished(result))
    }
    return finished(result)
  } finally {
    await run.dispose()
  }
}

async function collect(inputs: DeployInputs, deps: DeployDependencies): Promise<CollectedSite | undefined> {
  const { site, target } = inputs
  const root = site.path
  if (!root) return undefined
  // The digest is needed before any site is created only to plan (dry run) or to skip an unchanged
  // build; otherwise the files are hashed while they upload, from the same reads.
  const digestFirst = inputs.dryRun || (inputs.skipUnchanged && deps.previous?.digest !== undefined)
  const publish = target.kind !== 'none' && target.publish
  return deps.logger.group('Collect files', () =>
    collectSite({ ...site, path: root }, { ...deps, digestFirst, publish, siteRecord: inputs.siteRecord }),
  )
}

function manifestSaver(result: DeployResult, deps: DeployDependencies) {
  const file = deps.manifestFile ?? path.join(deps.tempDir, `gamehost-manifest-${process.pid}.json`)
  return async (manifest: Manifest): Promise<void> => {
    result.manifest = manifest
    const written = await writeManifest(manifest, file)
    if (deps.manifestFile === undefined && deps.tempDirRemoved) return
    result.manifestPath = written
    deps.logger.info(`Manifest written to ${written}`)
  }
}

interface Stage {
  inputs: DeployInputs
  run: Run
  result: DeployResult
  deps: DeployDependencies & {
    saveManifest: (manifest: Manifest) => Promise<void>
    onNamespace: (namespaceId: string) => void
    browser: ChosenBrowser | undefined
  }
}

async function sendAndGoLive(stage: Stage, site: CollectedSite | undefined): Promise<void> {
  const { inputs, run, result, deps } = stage
  const { logger } = deps
  // Exactly the routes of the published version when there are any; none keeps the base version's.
  const routes = site?.serving.routes.length ? cdnRoutes(site.serving.routes) : undefined
  const targeted: TargetedInputs | undefined = hasTarget(inputs) ? inputs : undefined
  const planned =
    targeted &&
    (await logger.group('Provision', () =>
      planTarget(run.client, targeted, routes, logger, deps.onNamespace),
    ))
  if (planned) result.provisioned = planned.provisioned
  run.signal.throwIfAborted()

  const served = planned?.publishing && (await readServed(stage, planned.publishing))
  if (served?.live) {
    result.older = await checkOlder({
      commit: deps.source?.commit,
      live: served.live,
      nameId: result.provisioned.nameId ?? '',
      allowOlder: inputs.allowOlder,
      compareCommits: deps.compareCommits,
      logger,
    })
    // This run's commit is behind the one live (and not allowed): nothing is uploaded or published.
    if (result.older.blocked) {
      result.older.url = served.liveUrl
      result.skipped = true
      return
    }
  }
  run.signal.throwIfAborted()

  if (site) await uploadOrReuse(stage, site, planned?.publishing)
  if (served?.base && result.manifest) {
    result.sizes = compareSizes(served.base.nameId, served.base.record, result.manifest)
    logger.info(`Compared with what ${served.base.nameId} serves: ${sizeSummary(result.sizes)}`)
  }

  const plan = planned?.publishing
  const siteId = result.siteId
  if (!targeted || !plan || !siteId) return
  run.signal.throwIfAborted()
  await publishAndSeeLive(stage, targeted, { ...plan, servedThen: served?.live }, siteId)
}

async function uploadOrReuse(
  stage: Stage,
  site: CollectedSite,
  plan: PublishPlan | undefined,
): Promise<void> {
  const { inputs, run, result, deps } = stage
  const { logger, previous } = deps
  if (site.manifest && inputs.skipUnchanged && previous?.siteId && previous.digest === site.manifest.digest) {
    const commit = previous.commit ? ` (commit ${previous.commit.slice(0, 7)})` : ''
    logger.info(
      `The files are unchanged since site ${previous.siteId}${commit} (digest ${site.manifest.digest}): ` +
        'no new site is created. Set skip-unchanged: false to upload anyway.',
    )
    const { siteId, uploadId } = previous
    return void Object.assign(result, { skipped: true, uploadCompleted: true, siteId, uploadId })
  }
  await logger.group('Upload', async () => {
    const reviewed = plan && (await reviewedBuild(stage, site, plan))
    if (reviewed && 'reused' in reviewed) return
    const uploaded = await uploadSite({
      ...deps,
      client: run.client,
      dispatcher: run.dispatcher,
      retry: run.retry,
      timeouts: run.timeouts,
      signal: run.signal,
      gameId: inputs.connection.gameId,
      siteName: inputs.site.name,
      files: site.files,
      manifest: site.manifest ?? reviewed?.manifest,
      concurrency: inputs.transfer.concurrency,
      onSiteCreated: (created) => Object.assign(result, created),
      onHashed: async (manifest) => {
        await deps.saveManifest(manifest)
        logger.info(`Digest ${manifest.digest}`)
      },
      record: inputs.siteRecord ? (deps.source ?? {}) : undefined,
    })
    Object.assign(result, { upload: uploaded.upload, uploadCompleted: true })
    if (uploaded.record) {
      const { path: recordPath, size, sha256, contentType } = uploaded.record
      result.record = { path: recordPath, size, sha256, contentType }
    }
  })
}

/** reuse-reviewed: the site of a namespace that serves this very build is this run's, or why none is. */
async function reviewedBuild(
  { inputs, run, result, deps }: Stage,
  site: CollectedSite,
  plan: PublishPlan,
): Promise<ReviewedOutcome | undefined> {
  const { logger } = deps
  const looked = await lookForReviewedBuild({
    inputs: { ...inputs, ref: deps.source?.ref },
    client: run.client,
    gameId: inputs.connection.gameId,
    game: plan.game,
    cdnDomain: plan.cdnDomain,
    target: result.provisioned.nameId,
    // skip-unchanged: false asks for a new site even when the namespace serves these files already.
    targetLeftOut: !inputs.skipUnchanged,
    local: { fileCount: site.files.length, totalBytes: site.totalBytes },
    manifest: site.manifest,
    hash: async () => {
      const manifest = buildManifest(site.files, await hashArtifacts(site.files, deps.open))
      await deps.saveManifest(manifest)
      logger.info(`Digest ${manifest.digest}`)
      return manifest
    },
    host: hostOptionsOf(run),
    logger,
  })
  if (!looked) return undefined
  result.reviewed = looked.account
  if ('reused' in looked.outcome) {
    const { siteId, record } = looked.outcome.reused
    Object.assign(result, { siteId, uploadCompleted: true, record })
  }
  return looked.outcome
}

async function publishAndSeeLive(
  { run, result, deps }: Stage,
  inputs: TargetedInputs,
  plan: PublishPlan & { servedThen: ServedRecords['live'] },
  siteId: string,
): Promise<void> {
  const { logger, onNamespace } = deps
  const waitPrivate = privateHostWaiter({
    ...hostOptionsOf(run),
    clock: run.clock,
    timer: run.timer,
    timeoutMs: inputs.verify.timeoutMs,
    logger,
    sleep: deps.sleep,
  })
  const live = await logger.group('Publish', () =>
    prepareVersion(run.client, inputs, plan, result.provisioned, siteId, logger, onNamespace, waitPrivate),
  )
  result.provisioned = live.provisioned
  if (!live.alreadyServed) {
    result.older = (await recheckBeforePublish(run, inputs, plan, live, deps)) ?? result.older
    if (result.older?.blocked) return void (result.older.url = live.published.url)
  }
  result.published = live.published
  // The namespace's own host: a custom domain serves only once the user's DNS points at it.
  const { manifest } = result
  const seen = await publishAndSee(
    { ...live, gameId: inputs.connection.gameId, nameId: live.provisioned.nameId ?? live.namespaceId },
    {
      settings: inputs.verify,
      expected: manifest
        ? { files: manifest.files, record: result.record, serving: result.serving }
        : { unknown: 'no manifest' },
      run,
      logger,
      sleep: deps.sleep,
      authorization: inputs.target.basicAuth && basicAuthorization(inputs.target.basicAuth),
      servedBefore:
        plan.servedThen && 'record' in plan.servedThen ? plan.servedThen.record.digest : undefined,
      onSeen: (seen) => (result.verification = seen),
    },
  )
  const { url } = live.published
  if (seen?.verified && url && deps.browser)
    await smokeTest({ ...deps, browser: deps.browser, inputs, run, published: live.published, url, result })
}

/** The service cannot set a version only if it is still the one planned from: it is read again here. */
function recheckBeforePublish(
  run: Run,
  inputs: TargetedInputs,
  plan: PublishPlan & { servedThen: ServedRecords['live'] },
  live: { namespaceId: string; provisioned: Provisioned; published: Published },
  deps: DeployDependencies,
): Promise<OlderCheck | undefined> {
  const { url } = live.published
  const options = hostOptionsOf(run)
  return recheckOlder({
    client: run.client,
    gameId: inputs.connection.gameId,
    namespaceId: live.namespaceId,
    nameId: live.provisioned.nameId ?? live.namespaceId,
    plannedFrom: plan.current ?? plan.createOn.id,
    servedThen: plan.servedThen,
    readServed: async () => (url ? readServedRecord(url, options) : { absent: 'its URL is unknown' }),
    older: {
      commit: deps.source?.commit,
      allowOlder: inputs.allowOlder,
      compareCommits: deps.compareCommits,
      logger: deps.logger,
    },
  })
}

interface ServedRecords {
  live?: { record: SiteRecord } | { absent: string }
  liveUrl?: string
  base?: { nameId: string; record: SiteRecord }
}

/** The records the namespace and compare-with's namespace serve, read once each, side by side. */
async function readServed({ inputs, run, result, deps }: Stage, plan: PublishPlan): Promise<ServedRecords> {
  const { cdnDomain } = plan
  const nameId = result.provisioned.nameId
  if (!cdnDomain) return {}
  const options = hostOptionsOf(run)
  const read = (name: string) => readServedRecord(namespaceUrl(cdnDomain, plan.gameNameId, name), options)
  // A namespace created by this run serves nothing yet.
  const live = plan.current !== undefined && nameId ? read(nameId) : undefined
  const compareWith = inputs.compareWith
  const base = compareWith && (compareWith === nameId && live ? live : read(compareWith))
  const [liveRead, baseRead] = await Promise.all([live, base || undefined])
  if (compareWith && baseRead && 'absent' in baseRead)
    deps.logger.info(`No size comparison: ${compareWith} serves no record of a build (${baseRead.absent})`)
  return {
    live: liveRead,
    liveUrl: nameId && namespaceUrl(cdnDomain, plan.gameNameId, nameId),
    base:
      compareWith && baseRead && 'record' in baseRead
        ? { nameId: compareWith, record: baseRead.record }
        : undefined,
  }
}

function startResult(inputs: DeployInputs, site: CollectedSite | undefined): DeployResult {
  const { target } = inputs
  return {
    dryRun: inputs.dryRun,
    skipped: false,
    siteName: inputs.site.name,
    provisioned: {
      nameId: targetNameId(target),
      // namespace-id is the game's only once provisioning found it: a run failing before must not report it.
      namespaceId: inputs.dryRun && target.kind === 'id' ? target.namespaceId : undefined,
      namespaceCreated: false,
      domain: inputs.dryRun && target.kind !== 'none' ? target.domain : undefined,
      matchmakerValidated: false,
    },
    uploadCompleted: false,
    plannedParts: site?.files.length ?? 0,
    durationMs: 0,
    serving: site?.serving,
    collected: site && {
      fileCount: site.files.length,
      totalBytes: site.totalBytes,
      ...(site.hidden.length ? { hidden: site.hidden } : {}),
    },
  }
}

function logPlan(inputs: DeployInputs, result: DeployResult, logger: Logger): void {
  const { target } = inputs
  const { manifest } = result
  const sitePlan =
    manifest &&
    `Would create CDN site '${inputs.site.name}' with ${manifest.fileCount} files ` +
      `(${formatBytes(manifest.totalBytes)}): one request per file, as the service answers for CDN sites`
  if (target.kind === 'none') {
    if (sitePlan) logger.info(sitePlan)
    return
  }
  if (target.kind === 'name')
    logger.info(`Would use namespace ${target.nameId}, or create it when the game has none of that name`)
  else logger.info(`Would check that namespace ${target.namespaceId} is in the game`)
  if (target.domain) logger.info(`Would add domain ${target.domain} unless the namespace has it`)
  if (target.matchmaker) logger.info('Would validate the matchmaker config with the service')
  if (target.basicAuth)
    logger.info(
      `Would make the namespace private (basic auth, user ${target.basicAuth.user}) and wait until its host answers 401, before publishing`,
    )
  if (sitePlan) logger.info(sitePlan)
  if (!target.publish) return
  const base =
    target.versionId ??
    "the namespace's current version (for a new namespace: what prod serves, else the game's latest)"
  const routes = result.serving?.routes.length
  logger.info(
    `Would make a version of the site from ${base}, keeping its config but for the site, and publish it` +
      (routes
        ? `, with exactly the ${plural(routes, 'route')} above in place of its routes`
        : ', its routes kept'),
  )
}
