// POST /cloud/games/{game_id}/cdn/sites: registers a site's files and answers presigned PUTs as the
// service does since v24.6: one PutObject per file under multipartThreshold (5 MiB), one UploadPart
// per 100 MiB part of a larger file.

import { displayNameProblems, isU64, planParts } from '../../api/rules.ts'
import type { CreateCdnSiteResponse, FileDescriptor, PresignedRequest } from '../../api/types.ts'
import { isJsonObject, stringField } from '../body.ts'
import { requireGame, type ApiRoute } from '../core.ts'
import { ApiError, badBody, internalError } from '../errors.ts'
import type { ResolvedOptions } from '../options.ts'
import type { SitePart } from '../state.ts'

/** X-Amz-Expires of a whole file's PutObject URL: 1 hour. */
const URL_LIFETIME_S = 3600
/** X-Amz-Expires of a multipart upload's UploadPart URL: 6 hours. */
const PART_URL_LIFETIME_S = 6 * 3600

export const createGameCdnSite: ApiRoute = {
  method: 'POST',
  pattern: '/cloud/games/:game_id/cdn/sites',
  async handle(context) {
    const displayName = stringField(context.body, 'display_name')
    const files = fileDescriptors(context.body.files)
    // The service checks the name inside its site creation: a bad one is an internal error.
    if (displayNameProblems(displayName).length > 0) throw internalError()
    const { options, state, signer, storeUrl } = context.core
    checkSize(files, options)
    const game = requireGame(context)
    // The real service fails on its unique index: an internal error, not a validation error.
    if (new Set(files.map((file) => file.path)).size !== files.length) throw internalError()

    const site = state.createSite(game.id, displayName, files, planSiteParts(files, options))
    const now = options.now()
    const presignedRequests = await Promise.all(
      site.parts.map(async (part): Promise<PresignedRequest> => {
        const file = files[part.fileIndex]
        if (!file) throw internalError()
        const multipart = file.content_length >= options.multipartThreshold
        const url = await signer.url(storeUrl, {
          uploadId: site.uploadId,
          partIndex: part.index,
          multipart,
          path: part.path,
          contentLength: part.contentLength,
          // A part's content type was set when its multipart upload was created: it is not signed.
          contentType: multipart ? undefined : file.content_type,
          signedAt: now,
          expiresIn: multipart ? PART_URL_LIFETIME_S : URL_LIFETIME_S,
        })
        return { path: part.path, url, byte_offset: part.byteOffset, content_length: part.contentLength }
      }),
    )
    const answer: CreateCdnSiteResponse = {
      site_id: site.siteId,
      upload_id: site.uploadId,
      presigned_requests: presignedRequests,
    }
    return answer
  },
}

/**
 * The body's files as the service reads them: the whole body parses first (a wrong type is
 * API_BAD_BODY), then each file converts, and a negative length fails that conversion.
 */
function fileDescriptors(value: unknown): FileDescriptor[] {
  const files = parsedFiles(value)
  const negative = files.findIndex((file) => !isU64(file.content_length))
  if (negative >= 0) {
    throw new ApiError(
      'MATCHMAKER_INVALID_VERSION_CONFIG',
      `Invalid version config: files[${negative}].content_length out of bounds, got ${files[negative]?.content_length}.`,
    )
  }
  return files
}

function parsedFiles(value: unknown): FileDescriptor[] {
  if (!Array.isArray(value)) throw badBody('"files" must be an array')
  return value.map((item: unknown, index) => {
    if (!isJsonObject(item)) throw badBody(`files[${index}] must be an object`)
    const { path, content_length: contentLength, content_type: contentType } = item
    if (typeof path !== 'string' || path === '')
      throw badBody(`files[${index}].path must be a non-empty string`)
    if (typeof contentLength !== 'number' || !Number.isSafeInteger(contentLength))
      throw badBody(`files[${index}].content_length must be a 64-bit integer`)
    if (contentType === undefined || contentType === null) return { path, content_length: contentLength }
    if (typeof contentType !== 'string') throw badBody(`files[${index}].content_type must be a string`)
    return { path, content_length: contentLength, content_type: contentType }
  })
}

function checkSize(files: FileDescriptor[], options: ResolvedOptions): void {
  const total = files.reduce((sum, file) => sum + file.content_length, 0)
  if (total >= options.siteBytesLimit) {
    throw new ApiError(
      'UPLOAD_TOO_LARGE',
      `Upload too large: the files total ${total} bytes, a site must stay under ${options.siteBytesLimit} bytes.`,
    )
  }
  for (const file of files) {
    const multipart = file.content_length >= options.multipartThreshold
    const partCount = multipart ? Math.ceil(file.content_length / options.partSize) : 1
    if (partCount > options.maxParts) {
      throw new ApiError(
        'UPLOAD_TOO_LARGE',
        `Upload too large: "${file.path}" needs ${partCount} parts, at most ${options.maxParts} are allowed.`,
      )
    }
  }
}

function planSiteParts(files: FileDescriptor[], options: ResolvedOptions): SitePart[] {
  return files.flatMap((file, fileIndex) =>
    planParts(file.content_length, options.multipartThreshold, options.partSize).map(
      ([byteOffset, contentLength], index): SitePart => ({
        fileIndex,
        path: file.path,
        index,
        byteOffset,
        contentLength,
        md5: undefined,
      }),
    ),
  )
}
