// A part sent from bytes (the close's page): from memory, whole or in parts, hashed, no file opened.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, test } from 'node:test'
import { createAgent } from '../../../src/api/http.ts'
import { retryPolicy } from '../../../src/common/retry.ts'
import { memoryLogger } from '../../../src/common/logger.ts'
import { timeoutsFor } from '../../../src/common/timeouts.ts'
import type { BytesFile } from '../../../src/deploy/upload/parts.ts'
import { uploadFiles } from '../../../src/deploy/upload/upload.ts'
import { fakeStore, md5 } from '../../support/fake-store.ts'

const agent = createAgent()
after(() => agent.close())

test('a part from bytes is sent from memory, whole or in parts, hashed, with no file opened', async () => {
  const page = Buffer.from('<!doctype html>\n<h1>Preview closed</h1>\n')
  const big = Buffer.alloc(3000, 7)
  const files: BytesFile[] = [
    { path: 'index.html', size: page.length, contentType: 'text/html; charset=utf-8', bytes: page },
    { path: 'big.bin', size: big.length, bytes: big },
  ]
  const received = new Map<string, { body: Buffer; type: string | undefined }>()
  const store = await fakeStore((req, body, res) => {
    received.set(req.url!, { body, type: req.headers['content-type'] })
    res.writeHead(200, { etag: `"${md5(body)}"` }).end()
  })
  const result = await uploadFiles({
    files,
    requests: [
      { path: 'index.html', url: `${store.url}/page`, byte_offset: 0, content_length: page.length },
      { path: 'big.bin', url: `${store.url}/b1`, byte_offset: 0, content_length: 1000 },
      { path: 'big.bin', url: `${store.url}/b2`, byte_offset: 1000, content_length: 2000 },
    ],
    dispatcher: agent,
    concurrency: 2,
    retry: retryPolicy({ sleep: async () => {} }),
    timeouts: timeoutsFor(5000),
    logger: memoryLogger(),
    open: () => {
      throw new Error('no file is opened')
    },
  })
  assert.deepEqual(received.get('/page'), { body: page, type: 'text/html; charset=utf-8' })
  assert.deepEqual(received.get('/b1')?.body, big.subarray(0, 1000))
  assert.deepEqual(received.get('/b2')?.body, big.subarray(1000))
  const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex')
  assert.deepEqual(result.sha256, [sha256(page), sha256(big)])
})
