// GET/HEAD /_sites/{site_id}/{path}: the files of completed sites, as a browser would get them.

import { createReadStream } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { pipeline } from 'node:stream/promises'
import type { EmulatorCore } from './core.ts'
import { drain, sendText } from './http.ts'

export const SITES_PREFIX = '/_sites/'
const DEFAULT_CONTENT_TYPE = 'application/octet-stream'

/** `segments` are the decoded path segments after '_sites': the site id, then the file path. */
export async function serveSiteFile(
  core: EmulatorCore,
  req: IncomingMessage,
  res: ServerResponse,
  segments: readonly string[],
): Promise<void> {
  await drain(req)
  const [siteId = '', ...pathSegments] = segments
  const site = core.state.siteById(siteId)
  let path = pathSegments.join('/')
  if (path === '' || path.endsWith('/')) path += 'index.html'
  const fileIndex = site?.files.findIndex((file) => file.path === path) ?? -1
  const file = site?.files[fileIndex]
  if (!site?.completed || pathSegments.length === 0 || !file) {
    sendText(res, 404, 'Not Found\n')
    return
  }
  res.writeHead(200, {
    'content-type': file.content_type ?? DEFAULT_CONTENT_TYPE,
    'content-length': file.content_length,
  })
  if (req.method === 'HEAD') {
    res.end()
    return
  }
  await pipeline(createReadStream(core.storage.filePath(site.uploadId, fileIndex)), res)
}
