// The smoke test of a page served from 127.0.0.1, in the machine's Chrome or Chromium, with
// on-verify-failure warn: what it concluded, what it logged and what the watch kept.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { ServiceClient } from '../../src/api/client.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { systemClock, systemTimer } from '../../src/common/timeouts.ts'
import type { Published } from '../../src/deploy/live/prepare.ts'
import { chooseBrowser, smokeTest, type SmokeResult } from '../../src/deploy/smoke/index.ts'
import { watchPage, type Seen } from '../../src/deploy/smoke/watch.ts'
import { readInputs, type TargetedInputs } from '../../src/inputs/deploy.ts'
import { getter, tempDir } from './helpers.ts'

/** A drawn canvas: two colours. */
export const CANVAS = `<canvas width="320" height="200"></canvas>
<script>
const context = document.querySelector('canvas').getContext('2d')
context.fillStyle = '#102030'
context.fillRect(0, 0, 320, 200)
context.fillStyle = '#ff8800'
context.fillRect(40, 40, 100, 100)
</script>`

export type Handler = (request: IncomingMessage, response: ServerResponse) => void

/** Serves each page at its path (HTML), or hands the request to a handler of that path. */
export async function servePages(
  pages: Record<string, string | Handler>,
): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => {
    const page = pages[request.url ?? '']
    if (typeof page === 'function') return page(request, response)
    response.writeHead(page ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' })
    response.end(page ?? 'not found')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

export interface SmokeRun {
  smoke: SmokeResult
  lines: string[]
  seen?: Seen
  /** The publish the smoke test was of. */
  published: Published
}

export async function smokeOf(url: string, browser: string, seconds = '2'): Promise<SmokeRun> {
  const inputs = readInputs(
    getter({
      'api-url': 'http://127.0.0.1:1',
      token: 't',
      'game-id': '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
      path: 'build',
      namespace: 'pr-1',
      'smoke-test': 'true',
      'smoke-test-seconds': seconds,
      'on-verify-failure': 'warn',
      browser,
    }),
  ) as TargetedInputs
  const logger = memoryLogger()
  const journal: { smoke?: SmokeResult; provisioned: { namespaceId?: string; nameId?: string } } = {
    provisioned: { namespaceId: 'ns-1', nameId: 'pr-1' },
  }
  let seen: Seen | undefined
  const published: Published = {
    versionId: 'v2',
    versionName: 'build 2',
    replacedVersionId: 'v1',
    created: true,
    url,
    domain: undefined,
  }
  await smokeTest({
    inputs,
    browser: (await chooseBrowser(inputs))!,
    run: {
      client: {} as ServiceClient,
      signal: new AbortController().signal,
      clock: systemClock,
      timer: systemTimer,
    },
    published,
    url,
    result: journal,
    logger,
    tempDir: await tempDir(),
    watch: async (options) => (seen = await watchPage(options)),
  })
  return { smoke: journal.smoke!, lines: logger.lines, seen, published }
}
