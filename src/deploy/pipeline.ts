import path from 'node:path'
import type { Dispatcher } from 'undici'
import type { ServiceClient } from '../api/client.ts'
import type { RetryPolicy } from '../api/retry.ts'
import { openRun } from '../common/run.ts'
import { SITE_BYTES_LIMIT } from '../api/rules.ts'
import {
  buildManifest,
  fileDescriptors,
  hashArtifacts,
  scanArtifacts,
  writeManifest,
  type ArtifactFile,
  type Globber,
  type Manifest,
} from './files.ts'
import { UsageError } from '../api/errors.ts'
import { Input } from '../inputs/constants.ts'
import type { DeployInputs } from '../inputs/deploy.ts'
import { formatBytes } from '../common/format.ts'
import type { Logger } from '../common/logger.ts'
import {
  checkMatchmakerConfig,
  chooseVersion,
  createNamespaceOn,
  provision,
  type Provisioned,
} from './provision.ts'
import {
  createVersion,
  deployConfig,
  namespaceUrl,
  readVersion,
  validateDeployVersion,
  versionName,
} from './publish.ts'
import type { CdnRoute, GameVersion } from '../api/types.ts'
import {
  applyContentTypes,
  cdnRoutes,
  logServingPlan,
  planServing,
  sameRoutes,
  type ServingPlan,
} from './web-engine.ts'
import { uploadParts, type UploadResult } from './upload.ts'
import type { OpenFile } from './fd.ts'

export interface DeployResult {
  dryRun: boolean
  /** The files equal the last completed site of this preview: no site was created, siteId is that one. */
  skipped: boolean
  siteName: string
  siteId: string | undefined
  uploadId: string | undefined
  provisioned: Provisioned
  /** Undefined when no `path` was given (provisioning only). */
  manifest: Manifest | undefined
  manifestPath: string | undefined
  upload: UploadResult | undefined
  /** The site holds every file: its upload was completed (or it is the reused, unchanged one). */
  uploadCompleted: boolean
  /** The version made for the site and published to the namespace; undefined when nothing was published. */
  published: Published | undefined
  /** Requests a dry run expects: one per file, as the service answers for CDN sites. */
  plannedParts: number
  durationMs: number
  /** How the files are served (web-engine, headers): undefined without a path. */
  serving?: ServingPlan
  /**
   * What the scan collected, known before any file is hashed: a run that fails before its manifest
   * exists (the files are hashed while they upload) still reports them. Undefined without a path.
   */
  collected?: { fileCount: number; totalBytes: number }
}

export interface Published {
  versionId: string
  versionName: string
  /** What the namespace served before; undefined for a namespace this run created. */
  replacedVersionId: string | undefined
  /** False when the namespace already served a version of this site: nothing was created. */
  created: boolean
  /** Where the namespace serves it: the custom domain, else its host name under cdn-domain. */
  url: string
}

/** A site an earlier run completed for the same preview, as the preview's own record keeps it. */
export interface PreviousSite {
  siteId?: string
  uploadId?: string
  digest?: string
  commit?: string
}

export interface DeployDependencies {
  logger: Logger
  /** Lists the files that `files` selects (see Globber). */
  glob: Globber
  /** Where the manifest file goes (RUNNER_TEMP in the action). */
  tempDir: string
  /** The manifest's file, instead of one in tempDir (the CLI's --manifest FILE). */
  manifestFile?: string
  dispatcher?: Dispatcher
  retry?: Partial<RetryPolicy>
  progressIntervalMs?: number
  /** The last completed site of this preview and its digest (for skip-unchanged only). */
  previous?: PreviousSite
  /** Hears of the namespace as soon as it is known, so a failure later on can still record it. */
  onNamespace?: (namespaceId: string) => void
  /** Cancels the deploy: nothing new starts, requests in flight are aborted, the upload is never completed. */
  signal?: AbortSignal
  /** Opens the site's files (default fs.open): a test's fails as a refusal or a full descriptor table would. */
  open?: OpenFile
}

/**
 * What deploy() throws when it fails past the local checks: the error it failed with (`cause`, whose
 * message it has) and what it had done before (`partial`: the namespace, the site it created). A
 * failure of the local checks is thrown as it is. See deployFailure.
 */
export class DeployError extends Error {
  override name = 'DeployError'
  readonly partial: DeployResult
  constructor(cause: unknown, partial: DeployResult) {
    super(cause instanceof Error ? cause.message : String(cause), { cause })
    this.partial = partial
  }
}

/**
 * A failed deploy's own error, unwrapped from a DeployError, and what the deploy had done before it
 * (undefined when it failed before anything was sent).
 */
export function deployFailure(error: unknown): { error: unknown; partial: DeployResult | undefined } {
  return error instanceof DeployError
    ? { error: error.cause, partial: error.partial }
    : { error, partial: undefined }
}

/**
 * The deploy: collect and hash the files (nothing is created before every local check passed),
 * provision the namespace, create the CDN site, upload every part, complete the upload. A failure
 * past the local checks is thrown as a DeployError.
 */
export async function deploy(inputs: DeployInputs, deps: DeployDependencies): Promise<DeployResult> {
  const { logger } = deps
  if (!inputs.path && !inputs.namespace && !inputs.namespaceId && !inputs.domain && !inputs.matchmaker) {
    throw new UsageError(
      `${Input.Path} is empty (no site to upload) and nothing is to be provisioned ` +
        `(${Input.Namespace}, ${Input.Domain}, ${Input.LobbyCountMax}): nothing to do. Give ${Input.Path}, the folder of the built site`,
    )
  }
  // Its pool and client are made on first use: a dry run or a failed local check makes neither.
  const run = openRun({
    connection: inputs,
    logger,
    requestTimeoutMs: inputs.requestTimeoutMs,
    retries: inputs.retries,
    maxRetryAfterMs: inputs.maxRetryAfterMs,
    retry: deps.retry,
    dispatcher: deps.dispatcher,
    signal: deps.signal,
    name: 'deploy',
  })
  const { signal, retry, clock } = run
  const started = clock.now()

  // The digest is needed before any site is created only to plan (dry run) or to skip an unchanged
  // build; otherwise the files are hashed while they upload, from the same reads.
  const digestFirst = inputs.dryRun || (inputs.skipUnchanged && deps.previous?.digest !== undefined)
  let files: ArtifactFile[] | undefined
  let manifest: Manifest | undefined
  let serving: ServingPlan | undefined
  let collected: DeployResult['collected']
  if (inputs.path) {
    const root = inputs.path
    files = await logger.group('Collect files', async () => {
      const found = await scanArtifacts({
        root,
        patterns: inputs.files,
        glob: deps.glob,
        includeHidden: inputs.includeHidden,
        logger,
        open: deps.open,
        sizeLimit: {
          bytes: SITE_BYTES_LIMIT,
          message: (total) =>
            `path: the site holds ${formatBytes(total)}; the service takes less than ${SITE_BYTES_LIMIT} bytes (1 GB) a site`,
        },
      })
      collected = { fileCount: found.length, totalBytes: found.reduce((sum, f) => sum + f.size, 0) }
      logger.info(`${found.length} files, ${formatBytes(collected.totalBytes)}`)
      // What the engine needs, and the headers' routes, checked before anything is created.
      serving = await planServing(found, inputs.webEngine, inputs.headers)
      applyContentTypes(found, serving)
      logServingPlan(serving, logger)
      if (serving.routes.length && !inputs.publish) {
        logger.info(
          `No version is published (${Input.Publish} is off, or no namespace): the routes above are not set; the content types are`,
        )
      }
      if (digestFirst) {
        manifest = buildManifest(found, await hashArtifacts(found, undefined, deps.open))
        logger.info(`Digest ${manifest.digest}`)
      }
      return found
    })
  }
  checkMatchmakerConfig(inputs.matchmaker)
  signal?.throwIfAborted()
  // The service's answer decides the requests; for a CDN site it gives one PUT per file.
  const plannedParts = files?.length ?? 0

  const result: DeployResult = {
    dryRun: inputs.dryRun,
    skipped: false,
    siteName: inputs.siteName,
    siteId: undefined,
    uploadId: undefined,
    provisioned: {
      nameId: inputs.namespace?.nameId,
      // namespace-id is known to be the game's only once provisioning found it (onNamespace): a run
      // that fails before must not report a namespace that may not exist as one a re-run reuses.
      namespaceId: inputs.dryRun ? inputs.namespaceId : undefined,
      namespaceCreated: false,
      // Known to be attached only once provisioning is done (a dry run plans it).
      domain: inputs.dryRun ? inputs.domain : undefined,
      matchmakerValidated: false,
    },
    manifest: undefined,
    manifestPath: undefined,
    upload: undefined,
    uploadCompleted: false,
    published: undefined,
    plannedParts,
    durationMs: 0,
    serving,
    collected,
  }
  // Exactly the routes of the published version when there are any; none keeps the base version's.
  const routes = serving?.routes.length ? cdnRoutes(serving.routes) : undefined

  const manifestFile = deps.manifestFile ?? path.join(deps.tempDir, `gamehost-manifest-${process.pid}.json`)
  const saveManifest = async (complete: Manifest) => {
    result.manifest = complete
    result.manifestPath = await writeManifest(complete, manifestFile)
    logger.info(`Manifest written to ${result.manifestPath}`)
  }
  if (manifest) await saveManifest(manifest)

  if (inputs.dryRun) {
    await logger.group('Plan (dry run: nothing is created)', () =>
      Promise.resolve(logPlan(inputs, result, logger)),
    )
    result.durationMs = clock.now() - started
    return result
  }

  try {
    signal.throwIfAborted()
    const { client, dispatcher } = run
    const onNamespace = (id: string) => {
      // Known before the deploy ends: a failure or cancellation later on still reports it.
      result.provisioned.namespaceId = id
      deps.onNamespace?.(id)
    }
    let publishing: PublishPlan | undefined
    if (inputs.namespace || inputs.namespaceId) {
      await logger.group('Provision', async () => {
        const { provisioned, located } = await provision(client, inputs, logger, {
          onNamespace,
          createLater: inputs.publish,
        })
        result.provisioned = provisioned
        if (!inputs.publish) return
        // Everything the new version needs is read and validated before anything is created.
        const baseId =
          inputs.versionId ?? located.namespace?.version_id ?? chooseVersion(inputs, located.game).id
        const base = await readVersion(client, inputs.gameId, baseId)
        const name = await versionName(client, inputs.gameId, inputs.siteName, located.game.versions)
        await validateDeployVersion(client, inputs.gameId, name, base.config, routes)
        logger.info(
          `The new version '${name}' will be made from version '${base.display_name}' (${base.version_id}), ` +
            `its config kept but for the site${routes ? ' and the routes' : ''}`,
        )
        logger.info(routesLine(base, routes))
        publishing = {
          base,
          name,
          gameNameId: located.game.name_id,
          current: located.namespace?.version_id,
          routes,
        }
      })
    }
    signal?.throwIfAborted()
    const previous = deps.previous
    if (manifest && inputs.skipUnchanged && previous?.siteId && previous.digest === manifest.digest) {
      result.skipped = true
      result.uploadCompleted = true
      result.siteId = previous.siteId
      result.uploadId = previous.uploadId
      logger.info(
        `The files are unchanged since site ${previous.siteId}${previous.commit ? ` (commit ${previous.commit.slice(0, 7)})` : ''} ` +
          `(digest ${manifest.digest}): no new site is created. Set skip-unchanged: false to upload anyway.`,
      )
    } else if (files) {
      const siteFiles = files
      await logger.group('Upload', async () => {
        signal?.throwIfAborted()
        const site = await client.createCdnSite(inputs.gameId, {
          display_name: inputs.siteName,
          files: fileDescriptors(siteFiles),
        })
        result.siteId = site.site_id
        result.uploadId = site.upload_id
        logger.info(
          `Created CDN site '${inputs.siteName}' (${site.site_id}): ${site.presigned_requests.length} requests to upload ` +
            `for ${siteFiles.length} files, ` +
            `up to ${inputs.concurrency} at a time`,
        )
        result.upload = await uploadParts({
          files: siteFiles,
          hash: !manifest,
          requests: site.presigned_requests,
          dispatcher,
          concurrency: inputs.concurrency,
          retry,
          requestTimeoutMs: inputs.requestTimeoutMs,
          logger,
          progressIntervalMs: deps.progressIntervalMs,
          signal,
          open: deps.open,
        })
        if (!result.manifest) {
          await saveManifest(buildManifest(siteFiles, result.upload.sha256!))
          logger.info(`Digest ${result.manifest!.digest}`)
        }
        // A cancelled upload is never completed: the site stays empty rather than half there.
        signal?.throwIfAborted()
        await client.completeUpload(site.upload_id)
        result.uploadCompleted = true
        logger.info(
          `Completed upload ${site.upload_id}: site ${site.site_id} holds ${siteFiles.length} files`,
        )
      })
    }
    const plan = publishing
    if (plan && result.siteId) {
      const siteId = result.siteId
      signal?.throwIfAborted()
      result.published = await logger.group('Publish', () =>
        publish(client, inputs, result, plan, siteId, logger, onNamespace),
      )
    }
  } catch (error) {
    result.durationMs = clock.now() - started
    throw new DeployError(error, result)
  } finally {
    await run.dispose()
  }
  result.durationMs = clock.now() - started
  return result
}

/** What the deploy will publish, read and validated before anything is created. */
interface PublishPlan {
  /** The version whose config the new one is made from. */
  base: GameVersion
  name: string
  gameNameId: string
  /** What the namespace served before this run; undefined when it does not exist yet. */
  current: string | undefined
  /** The new version's routes; undefined keeps the base version's. */
  routes: CdnRoute[] | undefined
}

/** What becomes of the routes: exactly the ones computed, or the base version's kept. */
function routesLine(base: GameVersion, routes: CdnRoute[] | undefined): string {
  const baseRoutes = base.config.cdn?.routes ?? []
  const had = `${baseRoutes.length} route${baseRoutes.length === 1 ? '' : 's'}`
  return routes
    ? `Its routes are exactly the ${routes.length} above (${routes.map((r) => r.glob).join(', ')}), in place of the base version's ${had}`
    : `No routes computed (no web engine's needs, no ${Input.Headers}): it keeps the base version's ${had}`
}

/**
 * Makes the version of the new site from the base version and publishes it: to the namespace, or as
 * the first version of a namespace this run creates. A namespace that already serves a version of
 * this site (a re-run of an unchanged build) is left as it is.
 */
async function publish(
  client: ServiceClient,
  inputs: DeployInputs,
  result: DeployResult,
  plan: PublishPlan,
  siteId: string,
  logger: Logger,
  onNamespace: (id: string) => void,
): Promise<Published> {
  const { provisioned } = result
  const url = namespaceUrl(inputs.cdnDomain, plan.gameNameId, provisioned.nameId ?? '', inputs.domain)
  const existing = provisioned.namespaceId
  if (
    existing &&
    plan.current === plan.base.version_id &&
    plan.base.config.cdn?.site_id === siteId &&
    (!plan.routes || sameRoutes(plan.base.config.cdn.routes, plan.routes))
  ) {
    logger.info(
      `Namespace ${provisioned.nameId} already serves site ${siteId} (version '${plan.base.display_name}'): nothing to publish`,
    )
    logger.info(`Live at ${url}`)
    return {
      versionId: plan.base.version_id,
      versionName: plan.base.display_name,
      replacedVersionId: plan.current,
      created: false,
      url,
    }
  }
  const created = await createVersion(
    client,
    inputs.gameId,
    plan.name,
    deployConfig(plan.base.config, siteId, plan.routes),
    logger,
  )
  logger.info(`Created version '${created.displayName}' (${created.versionId}) with site ${siteId}`)
  if (existing) {
    await client.setNamespaceVersion(inputs.gameId, existing, created.versionId)
    logger.info(`Published version '${created.displayName}' to namespace ${provisioned.nameId} (${existing})`)
  } else {
    await createNamespaceOn(
      client,
      inputs,
      { id: created.versionId, description: `'${created.displayName}' (${created.versionId})` },
      provisioned,
      logger,
      onNamespace,
    )
  }
  logger.info(`Live at ${url}`)
  return {
    versionId: created.versionId,
    versionName: created.displayName,
    replacedVersionId: plan.current,
    created: true,
    url,
  }
}

function logPlan(inputs: DeployInputs, result: DeployResult, logger: Logger): void {
  if (inputs.namespace)
    logger.info(
      `Would use namespace ${inputs.namespace.nameId}, or create it when the game has none of that name`,
    )
  else if (inputs.namespaceId) logger.info(`Would check that namespace ${inputs.namespaceId} is in the game`)
  if (inputs.domain) logger.info(`Would add domain ${inputs.domain} unless the namespace has it`)
  if (inputs.matchmaker) logger.info('Would validate the matchmaker config with the service')
  if (result.manifest) {
    logger.info(
      `Would create CDN site '${inputs.siteName}' with ${result.manifest.fileCount} files ` +
        `(${formatBytes(result.manifest.totalBytes)}): one request per file, as the service answers for CDN sites`,
    )
  }
  if (inputs.publish) {
    const base = inputs.versionId ?? "the namespace's current version (the game's latest for a new namespace)"
    const routes = result.serving?.routes.length
    logger.info(
      `Would make a version of the site from ${base}, keeping its config but for the site, and publish it` +
        (routes
          ? `, with exactly the ${routes} route${routes === 1 ? '' : 's'} above in place of its routes`
          : ', its routes kept'),
    )
  }
}
