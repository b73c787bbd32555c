// POST /cloud/games/{game_id}/cdn/sites: registers a site's files and answers one presigned PUT per part.

import { displayNameProblems, isU64, planParts } from '../../api/rules.ts'
import type { FileDescriptor, PresignedRequest } from '../../api/types.ts'
import { isJsonObject, stringField } from '../body.ts'
import { requireGame, type ApiRoute } from '../core.ts'
import { ApiError, badBody, internalError, validationError } from '../errors.ts'
import type { ResolvedOptions } from '../options.ts'
import type { SitePart } from '../state.ts'

const HOUR_MS = 60 * 60 * 1000
const SINGLE_URL_LIFETIME_MS = HOUR_MS
const PART_URL_LIFETIME_MS = 6 * HOUR_MS

export const createGameCdnSite: ApiRoute = {
  method: 'POST',
  pattern: '/cloud/games/:game_id/cdn/sites',
  handle(context) {
    const displayName = stringField(context.body, 'display_name')
    const files = fileDescriptors(context.body.files)
    const nameProblems = displayNameProblems(displayName).map((problem) => ['display-name', problem])
    if (nameProblems.length > 0) throw validationError(nameProblems)
    const { options, state, signer, baseUrl } = context.core
    checkSize(files, options)
    const game = requireGame(context)
    // The real service fails on its unique index: an internal error, not a validation error.
    if (new Set(files.map((file) => file.path)).size !== files.length) throw internalError()

    const site = state.createSite(game.id, displayName, files, planSiteParts(files, options))
    const now = options.now()
    const presignedRequests = site.parts.map((part): PresignedRequest => {
      const file = files[part.fileIndex]
      if (!file) throw internalError()
      const multipart = file.content_length >= options.multipartThreshold
      const url = signer.url(baseUrl, {
        uploadId: site.uploadId,
        partIndex: part.index,
        path: part.path,
        byteOffset: part.byteOffset,
        contentLength: part.contentLength,
        contentType: file.content_type,
        expiresAt: now + (multipart ? PART_URL_LIFETIME_MS : SINGLE_URL_LIFETIME_MS),
      })
      return { path: part.path, url, byte_offset: part.byteOffset, content_length: part.contentLength }
    })
    return { site_id: site.siteId, upload_id: site.uploadId, presigned_requests: presignedRequests }
  },
}

function fileDescriptors(value: unknown): FileDescriptor[] {
  if (!Array.isArray(value)) throw badBody('"files" must be an array')
  return value.map((item: unknown, index) => {
    if (!isJsonObject(item)) throw badBody(`files[${index}] must be an object`)
    const { path, content_length: contentLength, content_type: contentType } = item
    if (typeof path !== 'string' || path === '')
      throw badBody(`files[${index}].path must be a non-empty string`)
    if (!isU64(contentLength))
      throw badBody(`files[${index}].content_length must be an unsigned 64-bit integer`)
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
