// Closing a preview: the service can delete neither a namespace nor a site, so a closed pull
// request's preview namespace is given a version whose site is a small page saying the preview was
// closed (no build content, every other part of the config kept), and its custom domain is freed.
// Running it twice changes nothing the second time.

import type { Dispatcher } from 'undici'
import { createAgent } from '../api/client.ts'
import { retryPolicy, type RetryPolicy } from '../api/retry.ts'
import type { NamespaceSummary } from '../api/types.ts'
import { escapeHtml } from '../common/report.ts'
import type { Logger } from '../common/logger.ts'
import { timeoutsFor } from '../common/timeouts.ts'
import type { TargetedInputs } from '../inputs/deploy.ts'
import { contentTypeOf } from './files.ts'
import { createVersion, deployConfig, namespaceUrl, readVersion } from './publish.ts'
import { uploadParts, type BytesFile } from './upload.ts'
import { deployClient } from './pipeline.ts'

export interface CloseResult {
  /** The preview's namespace; undefined when the game has none of that name (nothing to close). */
  namespace: NamespaceSummary | undefined
  /** The namespace served the closed page already: nothing was created. */
  alreadyClosed: boolean
  /** The site of the closed page and the version that serves it. */
  siteId: string | undefined
  versionId: string | undefined
  /** The domain removed from the namespace; undefined when it had none to remove. */
  domainRemoved: string | undefined
  url: string | undefined
}

export interface CloseDependencies {
  logger: Logger
  /** The pull request whose preview this is, for the page and the version's name. */
  pullRequest: number | undefined
  /** No longer used: the page is sent from memory (the faces still pass it; theirs to drop). */
  tempDir?: string
  dispatcher?: Dispatcher
  retry?: Partial<RetryPolicy>
  signal?: AbortSignal
}

/** The name of the closed page's version: one per pull request, so a second close finds it live. */
function closedVersionName(nameId: string, pullRequest: number | undefined): string {
  return pullRequest === undefined ? `${nameId} closed` : `${nameId} closed (#${pullRequest})`
}

export async function closePreview(inputs: TargetedInputs, deps: CloseDependencies): Promise<CloseResult> {
  const { logger } = deps
  const { target, transfer } = inputs
  const { gameId } = inputs.connection
  const retry = retryPolicy({
    retries: transfer.retries,
    maxRetryAfterMs: transfer.maxRetryAfterMs,
    signal: deps.signal,
    ...deps.retry,
  })
  const dispatcher = deps.dispatcher ?? createAgent()
  const result: CloseResult = {
    namespace: undefined,
    alreadyClosed: false,
    siteId: undefined,
    versionId: undefined,
    domainRemoved: undefined,
    url: undefined,
  }
  try {
    const client = deployClient(inputs, dispatcher, logger, retry, deps.signal)
    const { game } = await client.getGame(gameId)
    const namespace = game.namespaces.find((ns) =>
      target.kind === 'id' ? ns.namespace_id === target.namespaceId : ns.name_id === target.nameId,
    )
    if (!namespace) {
      logger.info(
        `The game has no namespace ${target.nameId ?? (target.kind === 'id' ? target.namespaceId : '')}: this preview was never deployed, nothing to close`,
      )
      return result
    }
    result.namespace = namespace
    result.url = namespaceUrl(target.cdnDomain, game.name_id, namespace.name_id)
    const name = closedVersionName(namespace.name_id, deps.pullRequest)
    const current = await readVersion(client, gameId, namespace.version_id)
    if (current.display_name === name) {
      result.alreadyClosed = true
      result.versionId = current.version_id
      result.siteId = current.config.cdn?.site_id
      logger.info(`Namespace ${namespace.name_id} already serves the closed page (version '${name}')`)
    } else {
      await logger.group('Publish the closed page', async () => {
        const file = closedPage(deps.pullRequest)
        const site = await client.createCdnSite(gameId, {
          display_name: name,
          files: [{ path: file.path, content_length: file.size, content_type: file.contentType }],
        })
        result.siteId = site.site_id
        await uploadParts({
          files: [file],
          requests: site.presigned_requests,
          hash: false,
          dispatcher,
          concurrency: 1,
          retry,
          timeouts: timeoutsFor(transfer.requestTimeoutMs),
          logger,
          signal: deps.signal,
        })
        await client.completeUpload(site.upload_id)
        const created = await createVersion(
          client,
          gameId,
          name,
          deployConfig(current.config, site.site_id),
          logger,
        )
        result.versionId = created.versionId
        await client.setNamespaceVersion(gameId, namespace.namespace_id, created.versionId)
        logger.info(
          `Namespace ${namespace.name_id} now serves a page saying the preview was closed (version '${created.displayName}'); ` +
            `it served version '${current.display_name}' (${current.version_id})`,
        )
      })
    }
    if (target.domain) {
      const { namespace: detail } = await client.getNamespace(gameId, namespace.namespace_id)
      if (detail.config.cdn.domains.some((entry) => entry.domain === target.domain)) {
        await client.removeNamespaceDomain(gameId, namespace.namespace_id, target.domain)
        result.domainRemoved = target.domain
        logger.info(`Removed domain ${target.domain} from namespace ${namespace.name_id}: it is free again`)
      } else {
        logger.info(`Namespace ${namespace.name_id} does not hold domain ${target.domain}: nothing to remove`)
      }
    }
    return result
  } finally {
    if (!deps.dispatcher) await (deps.signal?.aborted ? dispatcher.destroy() : dispatcher.close())
  }
}

/** The closed page: the pull request's number, no build content, sent from memory. */
function closedPage(pullRequest: number | undefined): BytesFile {
  const what = pullRequest === undefined ? 'This preview' : `The preview of pull request #${pullRequest}`
  const html =
    '<!doctype html>\n<html lang="en">\n<meta charset="utf-8">\n<title>Preview closed</title>\n' +
    `<h1>Preview closed</h1>\n<p>${escapeHtml(what)} was closed: its build is no longer served here.</p>\n</html>\n`
  const bytes = Buffer.from(html)
  return { path: 'index.html', size: bytes.length, contentType: contentTypeOf('index.html')!, bytes }
}
