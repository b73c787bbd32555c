// The deploy's third stage. A cancelled upload is never completed: the site stays empty, not half there.

import type { ServiceClient } from '../api/client.ts'
import { descriptorsFree, uploadsWithin } from './fd.ts'
import { buildManifest, fileDescriptors, type ArtifactFile, type Manifest } from './files.ts'
import { recordDescriptor, recordFile, recordSize, type BuildSource, type RecordFile } from './site-record.ts'
import { createProgress } from './progress.ts'
import { uploadParts, type UploadOptions, type UploadResult } from './upload.ts'

interface SiteUploadOptions extends Pick<
  UploadOptions,
  'dispatcher' | 'retry' | 'logger' | 'concurrency' | 'timeouts' | 'signal' | 'open'
> {
  client: ServiceClient
  gameId: string
  siteName: string
  files: ArtifactFile[]
  /** When hashed already (the upload proves it sent those bytes). */
  manifest: Manifest | undefined
  descriptorsFree?: () => number | undefined
  progressIntervalMs?: number
  onSiteCreated: (site: { siteId: string; uploadId: string }) => void
  /** Before the upload is completed. */
  onHashed: (manifest: Manifest) => Promise<void>
  /** Undefined: no record on the site. */
  record?: BuildSource
}

interface UploadedSite {
  siteId: string
  uploadId: string
  upload: UploadResult
  manifest: Manifest
  record: RecordFile | undefined
}

/** A record is uploaded with files hashed already; else last, made from their hashes (its size known before). */
export async function uploadSite(options: SiteUploadOptions): Promise<UploadedSite> {
  const { client, logger, files, signal, record: source } = options
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
  const known = options.manifest && source ? recordFile(options.manifest, source) : undefined
  const recordSizeNow = known?.size ?? (source ? recordSize(files, source) : undefined)
  const descriptors = fileDescriptors(
    recordSizeNow === undefined ? files : [...files, recordDescriptor(recordSizeNow)],
  )
  const site = await client.createCdnSite(options.gameId, {
    display_name: options.siteName,
    files: descriptors,
  })
  options.onSiteCreated({ siteId: site.site_id, uploadId: site.upload_id })
  const count = descriptors.length
  logger.info(
    `Created CDN site '${options.siteName}' (${site.site_id}): ${site.presigned_requests.length} requests to upload ` +
      `for ${count} files${source ? ' (the record of the build included)' : ''}, up to ${concurrency} at a time`,
  )
  // One progress for the site's files and its record, sent after them: it ends on the build's totals.
  const progress = createProgress({
    files: count,
    bytes: descriptors.reduce((sum, file) => sum + file.content_length, 0),
    logger,
    now: options.retry.now,
    intervalMs: options.progressIntervalMs,
  })
  const send = (sent: Pick<UploadOptions, 'files' | 'requests' | 'expected'>) =>
    uploadParts({ ...options, progress, concurrency, ...sent })
  let upload: UploadResult
  let manifest = options.manifest
  let record = known
  try {
    if (manifest || !source) {
      upload = await send({
        files: record ? [...files, record] : files,
        expected: manifest && hashedBefore(files, manifest),
        requests: site.presigned_requests,
      })
      manifest ??= buildManifest(files, upload.sha256)
    } else {
      const { matching, others } = site.presigned_requests.split(recordDescriptor(0).path)
      upload = await send({ files, requests: others })
      manifest = buildManifest(files, upload.sha256)
      record = recordFile(manifest, source)
      if (record.size !== recordSizeNow) {
        throw new Error(`The record of the build has ${record.size} bytes, not the ${recordSizeNow} planned`)
      }
      const last = await send({ files: [record], requests: matching })
      upload = { ...upload, parts: upload.parts + last.parts, bytes: upload.bytes + last.bytes }
    }
  } finally {
    progress.stop()
  }
  if (!options.manifest) await options.onHashed(manifest)
  signal?.throwIfAborted()
  await client.completeUpload(site.upload_id)
  logger.info(`Completed upload ${site.upload_id}: site ${site.site_id} holds ${count} files`)
  return { siteId: site.site_id, uploadId: site.upload_id, upload, manifest, record }
}

function hashedBefore(files: readonly ArtifactFile[], manifest: Manifest): string[] {
  const byPath = new Map(manifest.files.map((f) => [f.path, f.sha256]))
  return files.map((f) => byPath.get(f.path)!)
}
