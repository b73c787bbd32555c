// The practical limit: create the site, stream every range, complete. No hashing, no content types,
// no progress, no retries. Same HTTP client (undici), pool settings and read size as the action.
import { createReadStream } from 'node:fs'
import { readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import { parseArgs } from 'node:util'
import pLimit from 'p-limit'
import { Agent, request } from 'undici'

const { values } = parseArgs({
  options: {
    'api-url': { type: 'string' },
    token: { type: 'string' },
    'game-id': { type: 'string' },
    path: { type: 'string' },
    concurrency: { type: 'string', default: '8' },
  },
})
const root = path.resolve(values.path!)
const agent = new Agent({
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 120_000,
  connect: { timeout: 15_000 },
})
const authorization = `Bearer ${values.token}`

const entries = await readdir(root, { recursive: true, withFileTypes: true })
const names = entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name))
const files = await Promise.all(
  names.map(async (f) => ({ path: path.relative(root, f), content_length: (await stat(f)).size })),
)

const body = JSON.stringify({ display_name: 'bare upload', files })
const created = await request(`${values['api-url']}/cloud/games/${values['game-id']}/cdn/sites`, {
  method: 'POST',
  headers: {
    authorization,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  },
  body,
  dispatcher: agent,
})
const site = (await created.body.json()) as {
  upload_id: string
  presigned_requests: Array<{ path: string; url: string; byte_offset: number; content_length: number }>
}
const limit = pLimit(Number(values.concurrency))
await Promise.all(
  site.presigned_requests.map((r) =>
    limit(async () => {
      const res = await request(r.url, {
        method: 'PUT',
        headers: { 'content-length': String(r.content_length) },
        body:
          r.content_length === 0
            ? ''
            : createReadStream(path.join(root, r.path), {
                start: r.byte_offset,
                end: r.byte_offset + r.content_length - 1,
                highWaterMark: Math.min(256 * 1024, r.content_length),
              }),
        dispatcher: agent,
      })
      await res.body.dump()
      if (res.statusCode !== 200) throw new Error(`PUT ${r.path}: ${res.statusCode}`)
    }),
  ),
)
const done = await request(`${values['api-url']}/cloud/uploads/${site.upload_id}/complete`, {
  method: 'POST',
  headers: { authorization },
  dispatcher: agent,
})
await done.body.dump()
if (done.statusCode !== 200) throw new Error(`complete: ${done.statusCode}`)
await agent.close()
