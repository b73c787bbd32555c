// A store on 127.0.0.1 for the upload's tests: each PUT's answer is the test's to decide.
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after } from 'node:test'
import type { PresignedRequest } from '../../src/api/types.ts'

export const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex')

/** A store whose answer to each PUT (its body read) the test decides; it stops after the test file. */
export async function fakeStore(
  handle: (req: http.IncomingMessage, body: Buffer, res: http.ServerResponse, attempt: number) => void,
): Promise<{ url: string; attempts: () => number; received: Buffer[] }> {
  let attempts = 0
  const received: Buffer[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      received.push(body)
      handle(req, body, res, ++attempts)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  after(() => {
    server.closeAllConnections()
    server.close()
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    attempts: () => attempts,
    received,
  }
}

/** One presigned PUT per file, as the real service gives them, each named by `p` in its query. */
export function onePutPerFile(files: { path: string; size: number }[], storeUrl: string): PresignedRequest[] {
  return files.map((f) => ({
    path: f.path,
    url: `${storeUrl}/put?p=${f.path}`,
    byte_offset: 0,
    content_length: f.size,
  }))
}
