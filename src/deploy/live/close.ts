// Closing a preview: the service can delete neither a namespace nor a site, so the namespace is given
// a version whose site is a page saying the preview was closed, and its custom domain is freed.

import { hash } from 'node:crypto'
import type { ServiceClient } from '../../api/client.ts'
import type { GameVersion, NamespaceSummary } from '../../api/types.ts'
import { escapeHtml } from '../../common/report.ts'
import type { Logger } from '../../common/logger.ts'
import { openTransferRun, type Run, type RunOptions } from '../../api/run.ts'
import type { VerifySettings } from '../../inputs/common.ts'
import type { TargetedInputs } from '../../inputs/deploy.ts'
import { contentTypeOf } from '../collect/files.ts'
import { resolveCdnDomain } from '../target/cdn-domain.ts'
import { publishAndSee } from './publish-and-see.ts'
import {
  closedVersionName,
  createVersion,
  deployConfig,
  namespaceUrl,
  readVersion,
} from './version-config.ts'
import type { BytesFile } from '../upload/parts.ts'
import { uploadFiles } from '../upload/upload.ts'
import { explainServiceFailure } from '../../inputs/service-hints.ts'
import { Input } from '../../inputs/constants.ts'
import { describeAge, formatTtl } from '../../inputs/previews.ts'
import { inputAssignment } from '../../common/input-naming.ts'
import { basicAuthorization, type BasicAuth } from '../../inputs/basic-auth.ts'

export interface CloseResult {
  /** Undefined when the game has none of that name. */
  namespace?: NamespaceSummary
  alreadyClosed: boolean
  siteId?: string
  versionId?: string
  domainRemoved?: string
  url?: string
  /** Left as it was: it no longer served the version `onlyIfServing` named (a deploy published meanwhile). */
  deployedMeanwhile?: boolean
}

export type CloseDependencies = Pick<
  RunOptions,
  'logger' | 'retry' | 'dispatcher' | 'signal' | 'deadlineMs' | 'clock' | 'timer'
> & {
  pullRequest: number | undefined
  /** Why the preview is retired; default its pull request was closed. */
  reason?: RetireReason
  /** Close it only while it serves this version: the sweep decided on it, and a deploy may publish meanwhile. */
  onlyIfServing?: string
}

export type RetireReason =
  | { kind: 'closed' }
  | { kind: 'expired'; ageMs: number; ttlMs: number }
  | { kind: 'over-cap'; ageMs: number; maxPreviews: number; live: number }

/** Why, in words: `it was not deployed for 31 days, longer than preview-ttl: 30d`. */
export function retiredBecause(reason: RetireReason, pullRequest: number | undefined): string {
  switch (reason.kind) {
    case 'closed':
      return pullRequest === undefined ? 'it was closed' : `pull request #${pullRequest} was closed`
    case 'expired':
      return `it was not deployed for ${describeAge(reason.ageMs)}, longer than ${inputAssignment(Input.PreviewTtl, formatTtl(reason.ttlMs))}`
    case 'over-cap':
      return (
        `${reason.live} previews were live or going live, more than ${inputAssignment(Input.MaxPreviews, String(reason.maxPreviews))}, ` +
        `and this one was among the least recently deployed (${describeAge(reason.ageMs)} ago)`
      )
  }
}

/** What brings a retired preview back: a deploy of its pull request (none for a closed one). */
export const BRING_BACK = 'A push to the pull request (or a re-run of its deploy) brings it back.'

export type CloseInputs = Pick<TargetedInputs, 'connection' | 'target' | 'transfer' | 'verify'>

export async function closePreview(inputs: CloseInputs, deps: CloseDependencies): Promise<CloseResult> {
  const { logger } = deps
  const { target } = inputs
  const { gameId } = inputs.connection
  const run = openTransferRun(inputs, { ...deps, explain: explainServiceFailure }, 'close')
  try {
    const { client } = run
    const { game } = await client.getGame(gameId)
    const namespace = game.namespaces.find((ns) =>
      target.kind === 'id' ? ns.namespace_id === target.namespaceId : ns.name_id === target.nameId,
    )
    if (!namespace) {
      const named = target.kind === 'id' ? target.namespaceId : target.nameId
      logger.info(`The game has no namespace ${named}: this preview was never deployed, nothing to close`)
      return { alreadyClosed: false }
    }
    if (deps.onlyIfServing !== undefined && namespace.version_id !== deps.onlyIfServing) {
      logger.info(
        `Namespace ${namespace.name_id} was published to meanwhile (it serves version ${namespace.version_id} now): left as it is`,
      )
      return { namespace, alreadyClosed: false, deployedMeanwhile: true }
    }
    const cdnDomain = await resolveCdnDomain(client, target.cdnDomain, inputs.connection.apiUrl, logger)
    const url = cdnDomain && namespaceUrl(cdnDomain, game.name_id, namespace.name_id)
    const name = closedVersionName(namespace.name_id, deps.pullRequest)
    const current = await readVersion(client, gameId, namespace.version_id)
    const page =
      current.display_name === name
        ? alreadyClosed(current, namespace, logger)
        : await logger.group('Publish the closed page', () =>
            publishClosedPage(
              run,
              { gameId, namespace, current, name, url },
              closedPage(deps.pullRequest, deps.reason),
              { settings: inputs.verify, basicAuth: target.basicAuth },
            ),
          )
    const domainRemoved = target.domain
      ? await freeDomain(client, gameId, namespace, target.domain, logger)
      : undefined
    return { namespace, url, ...page, domainRemoved }
  } finally {
    await run.dispose()
  }
}

type ClosedPage = Pick<CloseResult, 'alreadyClosed' | 'siteId' | 'versionId'>

function alreadyClosed(current: GameVersion, namespace: NamespaceSummary, logger: Logger): ClosedPage {
  logger.info(
    `Namespace ${namespace.name_id} already serves the closed page (version '${current.display_name}')`,
  )
  return { alreadyClosed: true, versionId: current.version_id, siteId: current.config.cdn?.site_id }
}

async function publishClosedPage(
  run: Run,
  to: {
    gameId: string
    namespace: NamespaceSummary
    current: GameVersion
    name: string
    url: string | undefined
  },
  file: BytesFile,
  verify: { settings: VerifySettings; basicAuth: BasicAuth | undefined },
): Promise<ClosedPage> {
  const { gameId, namespace, current, name } = to
  const { client, logger } = run
  const site = await client.createCdnSite(gameId, {
    display_name: name,
    files: [{ path: file.path, content_length: file.size, content_type: file.contentType }],
  })
  await uploadFiles({
    files: [file],
    requests: site.presigned_requests,
    dispatcher: run.dispatcher,
    concurrency: 1,
    retry: run.retry,
    timeouts: run.timeouts,
    logger,
    signal: run.signal,
  })
  await client.completeUpload(site.upload_id)
  const config = deployConfig(current.config, site.site_id)
  const created = await createVersion(client, gameId, name, config, logger)
  const published = {
    versionId: created.versionId,
    versionName: created.displayName,
    replacedVersionId: current.version_id,
    created: true,
    url: to.url,
    domain: undefined,
  }
  const page = { ...file, sha256: hash('sha256', file.bytes) }
  // A closed preview is never put back on its build: not seen in time, the close fails (or warns).
  const { onFailure } = verify.settings
  const settings: VerifySettings = { ...verify.settings, onFailure: onFailure === 'warn' ? 'warn' : 'fail' }
  const { namespace_id: namespaceId, name_id: nameId } = namespace
  const change = { gameId, namespaceId, nameId, published, alreadyServed: false }
  const authorization = verify.basicAuth && basicAuthorization(verify.basicAuth)
  const expected =
    authorization || !(await isPrivate(client, gameId, namespace))
      ? { files: [page] }
      : { unknown: `namespace ${nameId} is private (basic auth), and the close has no credentials for it` }
  await publishAndSee(change, { settings, expected, run, logger, authorization })
  logger.info(`Namespace ${namespace.name_id} now serves a page saying the preview was closed`)
  return { alreadyClosed: false, siteId: site.site_id, versionId: created.versionId }
}

/** Its page stays private: without the credentials, the close cannot see it. */
async function isPrivate(
  client: ServiceClient,
  gameId: string,
  namespace: NamespaceSummary,
): Promise<boolean> {
  const { namespace: detail } = await client.getNamespace(gameId, namespace.namespace_id)
  return detail.config.cdn.auth_type === 'basic'
}

async function freeDomain(
  client: ServiceClient,
  gameId: string,
  namespace: NamespaceSummary,
  domain: string,
  logger: Logger,
): Promise<string | undefined> {
  const { namespace: detail } = await client.getNamespace(gameId, namespace.namespace_id)
  if (!detail.config.cdn.domains.some((entry) => entry.domain === domain)) {
    logger.info(`Namespace ${namespace.name_id} does not hold domain ${domain}: nothing to remove`)
    return undefined
  }
  await client.removeNamespaceDomain(gameId, namespace.namespace_id, domain)
  logger.info(`Removed domain ${domain} from namespace ${namespace.name_id}: it is free again`)
  return domain
}

function closedPage(pullRequest: number | undefined, reason: RetireReason | undefined): BytesFile {
  const what = pullRequest === undefined ? 'This preview' : `The preview of pull request #${pullRequest}`
  const said =
    !reason || reason.kind === 'closed'
      ? `${what} was closed: its build is no longer served here.`
      : `${what} was retired (${retiredBecause(reason, pullRequest)}): its build is no longer served here. ${BRING_BACK}`
  const html =
    '<!doctype html>\n<html lang="en">\n<meta charset="utf-8">\n<title>Preview closed</title>\n' +
    `<h1>Preview closed</h1>\n<p>${escapeHtml(said)}</p>\n</html>\n`
  const bytes = Buffer.from(html)
  return { path: 'index.html', size: bytes.length, contentType: contentTypeOf('index.html')!, bytes }
}
