// POST /cloud/uploads/{upload_id}/complete: assembles the uploaded parts into the site's files.

import { authorizeGame } from '../auth.ts'
import type { ApiRoute, EmulatorCore } from '../core.ts'
import { internalError } from '../errors.ts'
import type { SiteRecord } from '../state.ts'
import pLimit from 'p-limit'

export const completeUpload: ApiRoute = {
  method: 'POST',
  pattern: '/cloud/uploads/:upload_id/complete',
  async handle(context) {
    const site = context.core.state.siteByUpload(context.params.upload_id ?? '')
    if (!site) throw internalError()
    authorizeGame(context.token, site.gameId)
    if (!site.completed) {
      site.completing ??= assembleSite(context.core, site).finally(() => {
        site.completing = undefined
      })
      await site.completing
    }
    return {}
  },
}

/**
 * The real service has no check of its own for missing parts: its object store fails to complete or to
 * find the file, which surfaces as a plain internal error. The emulator answers the same, and names the
 * missing parts in metadata for whoever debugs it.
 */
async function assembleSite(core: EmulatorCore, site: SiteRecord): Promise<void> {
  const missing = site.parts.filter((part) => part.md5 === undefined)
  if (missing.length > 0) {
    throw internalError({
      missing_parts: missing.map((part) => ({ path: part.path, part_index: part.index })),
    })
  }
  const partCounts = new Map<number, number>()
  for (const part of site.parts) partCounts.set(part.fileIndex, (partCounts.get(part.fileIndex) ?? 0) + 1)
  const limit = pLimit(8)
  await Promise.all(
    site.files.map((file, fileIndex) =>
      limit(async () => {
        const size = await core.storage.assembleFile(site.uploadId, fileIndex, partCounts.get(fileIndex) ?? 0)
        if (size !== file.content_length) throw internalError()
      }),
    ),
  )
  site.completed = true
  await core.storage.discardParts(site.uploadId)
}
