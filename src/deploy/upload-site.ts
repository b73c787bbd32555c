// The deploy's third stage: the CDN site created, every part uploaded, the upload completed. A
// cancelled upload is never completed: the site stays empty rather than half there.

import type { Dispatcher } from 'undici'
import type { ServiceClient } from '../api/client.ts'
import type { RetryPolicy } from '../api/retry.ts'
import type { Logger } from '../common/logger.ts'
import type { Timeouts } from '../common/timeouts.ts'
import { descriptorsFree, uploadsWithin, type OpenFile } from './fd.ts'
import { buildManifest, fileDescriptors, type ArtifactFile, type Manifest } from './files.ts'
import { uploadParts, type UploadResult } from './upload.ts'

export interface SiteUploadOptions {
  client: ServiceClient
  dispatcher: Dispatcher
  retry: RetryPolicy
  logger: Logger
  gameId: string
  siteName: string
  files: ArtifactFile[]
  /** The manifest when the files were hashed already; else they are hashed from the upload's reads. */
  manifest: Manifest | undefined
  concurrency: number
  /** How many more files this process may open (default descriptorsFree: /proc on Linux); a test's own. */
  descriptorsFree?: () => number | undefined
  timeouts: Timeouts
  progressIntervalMs?: number
  signal?: AbortSignal
  open?: OpenFile
  /** Hears of the site as soon as it exists, so a failure later on still reports it. */
  onSiteCreated: (site: { siteId: string; uploadId: string }) => void
  /** Hears of the manifest made from the upload's reads, before the upload is completed. */
  onHashed: (manifest: Manifest) => Promise<void>
}

export interface UploadedSite {
  siteId: string
  uploadId: string
  upload: UploadResult
  manifest: Manifest
}

export async function uploadSite(options: SiteUploadOptions): Promise<UploadedSite> {
  const { client, logger, files, signal } = options
  signal?.throwIfAborted()
  // Read before the site exists: a low open-files limit is lived within, not met as EMFILE midway.
  const free = (options.descriptorsFree ?? descriptorsFree)()
  const concurrency = uploadsWithin(options.concurrency, free)
  if (concurrency < options.concurrency) {
    logger.info(
      `${free} file descriptors free under this process's open-files limit: ${concurrency} uploads at a time, ` +
        `not ${options.concurrency} (raise the limit for more: ulimit -n)`,
    )
  }
  const site = await client.createCdnSite(options.gameId, {
    display_name: options.siteName,
    files: fileDescriptors(files),
  })
  options.onSiteCreated({ siteId: site.site_id, uploadId: site.upload_id })
  logger.info(
    `Created CDN site '${options.siteName}' (${site.site_id}): ${site.presigned_requests.length} requests to upload ` +
      `for ${files.length} files, up to ${concurrency} at a time`,
  )
  const upload = await uploadParts({
    files,
    hash: !options.manifest,
    requests: site.presigned_requests,
    dispatcher: options.dispatcher,
    concurrency,
    retry: options.retry,
    timeouts: options.timeouts,
    logger,
    progressIntervalMs: options.progressIntervalMs,
    signal,
    open: options.open,
  })
  const manifest = options.manifest ?? buildManifest(files, upload.sha256!)
  if (!options.manifest) await options.onHashed(manifest)
  signal?.throwIfAborted()
  await client.completeUpload(site.upload_id)
  logger.info(`Completed upload ${site.upload_id}: site ${site.site_id} holds ${files.length} files`)
  return { siteId: site.site_id, uploadId: site.upload_id, upload, manifest }
}
