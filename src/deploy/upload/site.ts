// The deploy's third stage: create the site, upload its files and then the record of the build, and
// complete. A cancelled or failed upload is never completed: the site stays empty, not half there.
import { readdirSync, readFileSync } from 'node:fs'
import type { ServiceClient } from '../../api/client.ts'
import { buildManifest, fileDescriptors, type ArtifactFile, type Manifest } from '../collect/files.ts'
import {
  RECORD_PATH,
  recordDescriptor,
  recordFile,
  recordSize,
  type BuildSource,
  type RecordFile,
} from '../collect/record.ts'
import { createProgress } from './progress.ts'
import { uploadFiles, type UploadOptions, type UploadResult } from './upload.ts'

interface SiteUploadOptions extends Omit<UploadOptions, 'files' | 'requests' | 'expected' | 'progress'> {
  client: ServiceClient
  gameId: string
  siteName: string
  files: ArtifactFile[]
  /** When hashed already (the upload proves it sent those bytes). */
  manifest: Manifest | undefined
  progressIntervalMs?: number
  onSiteCreated: (site: { siteId: string; uploadId: string }) => void
  /** Before the upload is completed. */
  onHashed: (manifest: Manifest) => Promise<void>
  /** Undefined: no record on the site. */
  record?: BuildSource
}

interface UploadedSite {
  upload: UploadResult
  record: RecordFile | undefined
}

/** The record goes last, made from the files' digests as sent; its size is known before any is hashed. */
export async function uploadSite(options: SiteUploadOptions): Promise<UploadedSite> {
  const { client, logger, files, record: source } = options
  options.signal?.throwIfAborted()
  const concurrency = concurrencyWithin(options)
  const plannedRecordSize = source && recordSize(files, source)
  const descriptors = fileDescriptors(
    plannedRecordSize === undefined ? files : [...files, recordDescriptor(plannedRecordSize)],
  )
  const site = await client.createCdnSite(options.gameId, {
    display_name: options.siteName,
    files: descriptors,
  })
  options.onSiteCreated({ siteId: site.site_id, uploadId: site.upload_id })
  logger.info(
    `Created CDN site '${options.siteName}' (${site.site_id}): ${site.presigned_requests.length} requests to upload ` +
      `for ${descriptors.length} files${source ? ' (the record of the build included)' : ''}, up to ${concurrency} at a time`,
  )
  const progress = createProgress({
    files: descriptors.length,
    bytes: descriptors.reduce((sum, file) => sum + file.content_length, 0),
    logger,
    now: options.retry.now,
    intervalMs: options.progressIntervalMs,
  })
  const isRecord = (path: string) => source !== undefined && path === RECORD_PATH
  let manifest = options.manifest
  let record: RecordFile | undefined
  const makeRecord = (sha256: string[]) => {
    record = recordFile((manifest ??= buildManifest(files, sha256)), source!)
    if (record.size === plannedRecordSize) return record
    throw new Error(`The record of the build has ${record.size} bytes, not the ${plannedRecordSize} planned`)
  }
  const upload = await uploadFiles({
    ...options,
    progress,
    concurrency,
    files,
    requests: site.presigned_requests.filter((r) => !isRecord(r.path)),
    expected: options.manifest && hashedBefore(files, options.manifest),
    last: source && { requests: site.presigned_requests.filter((r) => isRecord(r.path)), make: makeRecord },
  }).finally(() => progress.stop())
  manifest ??= buildManifest(files, upload.sha256)
  if (!options.manifest) await options.onHashed(manifest)
  options.signal?.throwIfAborted()
  await client.completeUpload(site.upload_id)
  logger.info(`Completed upload ${site.upload_id}: site ${site.site_id} holds ${descriptors.length} files`)
  return { upload, record }
}

function hashedBefore(files: readonly ArtifactFile[], manifest: Manifest): string[] {
  const byPath = new Map(manifest.files.map((f) => [f.path, f.sha256]))
  return files.map((f) => byPath.get(f.path)!)
}

/** A PUT's file and socket. */
const DESCRIPTORS_PER_PUT = 2
/** The API's connections, the readers of files in parts, the runtime's own. */
const DESCRIPTORS_SPARED = 16

/** Read before the site exists: a low open-files limit is lived within, not met as EMFILE midway. */
function concurrencyWithin(options: SiteUploadOptions): number {
  const wanted = options.concurrency
  const free = descriptorsFree()
  const within = Math.max(1, Math.min(wanted, Math.floor((free - DESCRIPTORS_SPARED) / DESCRIPTORS_PER_PUT)))
  if (within < wanted)
    options.logger.info(
      `${free} file descriptors free under this process's open-files limit: ${within} uploads at a time, ` +
        `not ${wanted} (raise the limit for more: ulimit -n)`,
    )
  return within
}

/** `ulimit -n` less the descriptors held; Node has no getrlimit, so only Linux's /proc tells. */
function descriptorsFree(): number {
  try {
    const limit = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]
    return limit === undefined ? Infinity : Number(limit) - readdirSync('/proc/self/fd').length
  } catch {
    return Infinity
  }
}
