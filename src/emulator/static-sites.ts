// GET/HEAD /_sites/{site_id}/{path}: the files of completed sites, as a browser would get them. The
// namespaces' live sites (served by Host, see cdn-hosts.ts) are answered the same way.

import { createReadStream } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { pipeline } from 'node:stream/promises'
import type { EmulatorCore } from './core.ts'
import { drain, sendText } from './http.ts'
import type { SiteRecord } from './state.ts'

export const SITES_PREFIX = '/_sites/'
const DEFAULT_CONTENT_TYPE = 'application/octet-stream'

/** `segments` are the decoded path segments after '_sites': the site id, then the file path. */
export async function serveSiteFile(
  core: EmulatorCore,
  req: IncomingMessage,
  res: ServerResponse,
  segments: readonly string[],
): Promise<void> {
  const [siteId = '', ...pathSegments] = segments
  const site = core.state.siteById(siteId)
  if (pathSegments.length === 0) {
    await drain(req)
    sendText(res, 404, 'Not Found\n')
    return
  }
  await sendSiteFile(core, req, res, site, pathSegments.join('/'))
}

/**
 * Answers the file at `path` (relative, no leading slash) of a completed site: `index.html` for an
 * empty path or one ending in `/`, the declared content type, 404 for anything else. `headers` go
 * on every answer, a 404 included (as the CDN's header middleware does).
 */
export async function sendSiteFile(
  core: EmulatorCore,
  req: IncomingMessage,
  res: ServerResponse,
  site: SiteRecord | undefined,
  path: string,
  headers: Record<string, string> = {},
): Promise<void> {
  await drain(req)
  const filePath = path === '' || path.endsWith('/') ? `${path}index.html` : path
  const fileIndex = site?.files.findIndex((file) => file.path === filePath) ?? -1
  const file = site?.files[fileIndex]
  if (!site?.completed || !file) {
    sendText(res, 404, 'Not Found\n', undefined, headers)
    return
  }
  res.writeHead(200, {
    'content-type': file.content_type ?? DEFAULT_CONTENT_TYPE,
    ...headers,
    'content-length': file.content_length,
  })
  if (req.method === 'HEAD') {
    res.end()
    return
  }
  try {
    await pipeline(createReadStream(core.storage.filePath(site.uploadId, fileIndex)), res)
  } catch (error) {
    // A client that stops reading (a HEAD-sized check, a closed tab) is the client's doing, as on a CDN.
    if ((error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw error
  }
}
