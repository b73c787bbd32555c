// Closing a preview: the service can delete neither a namespace nor a site, so a closed pull
// request's preview namespace is given a version whose site is a small page saying the preview was
// closed (no build content, every other part of the config kept), and its custom domain is freed.
// Running it twice changes nothing the second time.

import { stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Dispatcher } from 'undici'
import type { RetryPolicy } from '../api/retry.ts'
import { openRun } from '../common/run.ts'
import type { NamespaceSummary } from '../api/types.ts'
import { escapeHtml } from '../common/report.ts'
import type { Logger } from '../common/logger.ts'
import type { DeployInputs } from '../inputs/deploy.ts'
import { contentTypeOf, fileDescriptors, type ArtifactFile } from './files.ts'
import { createVersion, deployConfig, namespaceUrl, readVersion } from './publish.ts'
import { uploadParts } from './upload.ts'

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
  /** Where the page's file is written before its upload. */
  tempDir: string
  dispatcher?: Dispatcher
  retry?: Partial<RetryPolicy>
  signal?: AbortSignal
}

/** The name of the closed page's version: one per pull request, so a second close finds it live. */
export function closedVersionName(nameId: string, pullRequest: number | undefined): string {
  return pullRequest === undefined ? `${nameId} closed` : `${nameId} closed (#${pullRequest})`
}

export async function closePreview(inputs: DeployInputs, deps: CloseDependencies): Promise<CloseResult> {
  const { logger } = deps
  const run = openRun({
    connection: inputs,
    logger,
    requestTimeoutMs: inputs.requestTimeoutMs,
    retries: inputs.retries,
    maxRetryAfterMs: inputs.maxRetryAfterMs,
    retry: deps.retry,
    dispatcher: deps.dispatcher,
    signal: deps.signal,
    name: 'close',
  })
  const { client, dispatcher, retry } = run
  const result: CloseResult = {
    namespace: undefined,
    alreadyClosed: false,
    siteId: undefined,
    versionId: undefined,
    domainRemoved: undefined,
    url: undefined,
  }
  try {
    const { game } = await client.getGame(inputs.gameId)
    const namespace = game.namespaces.find((ns) =>
      inputs.namespaceId ? ns.namespace_id === inputs.namespaceId : ns.name_id === inputs.namespace?.nameId,
    )
    if (!namespace) {
      logger.info(
        `The game has no namespace ${inputs.namespace?.nameId ?? inputs.namespaceId}: this preview was never deployed, nothing to close`,
      )
      return result
    }
    result.namespace = namespace
    result.url = namespaceUrl(inputs.cdnDomain, game.name_id, namespace.name_id)
    const name = closedVersionName(namespace.name_id, deps.pullRequest)
    const current = await readVersion(client, inputs.gameId, namespace.version_id)
    if (current.display_name === name) {
      result.alreadyClosed = true
      result.versionId = current.version_id
      result.siteId = current.config.cdn?.site_id
      logger.info(`Namespace ${namespace.name_id} already serves the closed page (version '${name}')`)
    } else {
      await logger.group('Publish the closed page', async () => {
        const file = await closedPage(deps.tempDir, deps.pullRequest)
        const site = await client.createCdnSite(inputs.gameId, {
          display_name: name,
          files: fileDescriptors([file]),
        })
        result.siteId = site.site_id
        await uploadParts({
          files: [file],
          requests: site.presigned_requests,
          hash: false,
          dispatcher,
          concurrency: 1,
          retry,
          requestTimeoutMs: inputs.requestTimeoutMs,
          logger,
          signal: run.signal,
        })
        await client.completeUpload(site.upload_id)
        const created = await createVersion(
          client,
          inputs.gameId,
          name,
          deployConfig(current.config, site.site_id),
          logger,
        )
        result.versionId = created.versionId
        await client.setNamespaceVersion(inputs.gameId, namespace.namespace_id, created.versionId)
        logger.info(
          `Namespace ${namespace.name_id} now serves a page saying the preview was closed (version '${created.displayName}'); ` +
            `it served version '${current.display_name}' (${current.version_id})`,
        )
      })
    }
    if (inputs.domain) {
      const { namespace: detail } = await client.getNamespace(inputs.gameId, namespace.namespace_id)
      if (detail.config.cdn.domains.some((entry) => entry.domain === inputs.domain)) {
        await client.removeNamespaceDomain(inputs.gameId, namespace.namespace_id, inputs.domain)
        result.domainRemoved = inputs.domain
        logger.info(`Removed domain ${inputs.domain} from namespace ${namespace.name_id}: it is free again`)
      } else {
        logger.info(`Namespace ${namespace.name_id} does not hold domain ${inputs.domain}: nothing to remove`)
      }
    }
    return result
  } finally {
    await run.dispose()
  }
}

/** The closed page: the pull request's number, no build content. */
async function closedPage(dir: string, pullRequest: number | undefined): Promise<ArtifactFile> {
  const what = pullRequest === undefined ? 'This preview' : `The preview of pull request #${pullRequest}`
  const html =
    '<!doctype html>\n<html lang="en">\n<meta charset="utf-8">\n<title>Preview closed</title>\n' +
    `<h1>Preview closed</h1>\n<p>${escapeHtml(what)} was closed: its build is no longer served here.</p>\n</html>\n`
  const absolutePath = path.join(dir, `gamehost-closed-${process.pid}.html`)
  await writeFile(absolutePath, html)
  const stats = await stat(absolutePath)
  return {
    path: 'index.html',
    absolutePath,
    size: stats.size,
    mtimeMs: stats.mtimeMs,
    dev: stats.dev,
    ino: stats.ino,
    contentType: contentTypeOf('index.html'),
  }
}
