// Why the 20,000-file peak is sometimes higher, shown without gamehost: undici PUTs, 192 at a time, a
// major collection 120 ms after the first (where the deploy's own falls, after the site's answer is
// parsed), and V8's young generation traced. Two arms of the same client: V8 as GitHub runs it, and
// V8 with allocation-site pretenuring off. A diagnostic, not a benchmark: it sets V8 flags on its
// own children, which the product never does. Usage: node scripts/bench/pretenuring.ts [--trials N]
import { spawn } from 'node:child_process'
import http from 'node:http'
import { parseArgs } from 'node:util'
import { Agent } from 'undici'

const PUTS = 60_000
const CONCURRENCY = 192
const MAJOR_GC_AFTER_MS = 120
const self = new URL(import.meta.url).pathname

const { values } = parseArgs({
  options: {
    trials: { type: 'string', default: '8' },
    serve: { type: 'boolean' },
    client: { type: 'string' },
  },
})
if (values.serve) serve()
else if (values.client) await client(values.client)
else await compare(Number(values.trials))

function serve(): void {
  const server = http.createServer((request, response) => {
    request
      .resume()
      .on('end', () =>
        response
          .writeHead(200, { etag: '"d41d8cd98f00b204e9800998ecf8427e"', 'x-amz-request-id': 'abc123' })
          .end(),
      )
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, '127.0.0.1', () =>
    console.log(`http://127.0.0.1:${(server.address() as { port: number }).port}`),
  )
}

/** PUTs on undici's dispatch API with plain callbacks: no promise, no gamehost code. */
async function client(base: string): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc!
  // What a deploy of 20,000 files holds through its upload, a record per file, each PUT's path from one.
  const records = Array.from({ length: 20_000 }, (_, i) => ({
    path: `assets/folder${i % 200}/file-${i}.js`,
    size: 4000 + i,
    index: i,
    digest: 'x'.repeat(40) + i,
  }))
  const agent = new Agent({ keepAliveTimeout: 30_000 })
  const signature =
    `X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=${'A'.repeat(200)}&X-Amz-Date=20261128T000000Z` +
    `&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=${'f'.repeat(64)}`
  let started = 0
  let done = 0
  let running = 0
  await new Promise<void>((resolve) => {
    const put = (i: number, ended: () => void) => {
      const handler = {
        onConnect: () => {},
        onHeaders: () => true,
        onData: () => true,
        onComplete: ended,
        onError: (error: Error) => {
          console.error(error.message)
          ended()
        },
      }
      const options = {
        origin: base,
        path: `/bucket/${records[i % records.length]!.path}?${signature}`,
        method: 'PUT' as const,
        headers: { 'content-length': '4000' },
        body: Buffer.allocUnsafe(4000),
      }
      agent.dispatch(options, handler)
    }
    const feed = () => {
      for (; running < CONCURRENCY && started < PUTS; started++, running++) {
        if (started === 0) setTimeout(() => (console.log(`answered=${done}`), gc()), MAJOR_GC_AFTER_MS)
        put(started, () => {
          running--
          if (++done === PUTS) resolve()
          feed()
        })
      }
    }
    feed()
  })
  await agent.close()
}

async function compare(trials: number): Promise<void> {
  const server = spawn(process.execPath, [self, '--serve'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const base = await new Promise<string>((resolve) =>
    server.stdout.once('data', (d) => resolve(String(d).trim())),
  )
  const arms = [
    ['V8 as GitHub runs it', []],
    ['pretenuring off', ['--no-allocation-site-pretenuring']],
  ] as const
  try {
    for (let trial = 1; trial <= trials; trial++) {
      for (const [name, flags] of arms) console.log(`${trial} ${name.padEnd(20)} ${await trace(base, flags)}`)
    }
  } finally {
    server.kill()
  }
}

/** The young generation's largest size, and what the young collections after the forced major one kept. */
async function trace(base: string, flags: readonly string[]): Promise<string> {
  const args = ['--expose-gc', '--trace-gc-nvp', ...flags, self, '--client', base]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (d: Buffer) => (out += d.toString()))
  await new Promise((resolve) => child.on('close', resolve))
  const lines = out.split('\n')
  const rows = lines.filter((line) => line.includes('gc='))
  const field = (line: string, name: string) =>
    Number(new RegExp(`\\b${name}=(\\d+)`).exec(line)?.[1] ?? 0) / 2 ** 20
  // The forced major collection is the first one traced after the client says it forces it.
  const forced = lines.findIndex((line) => line.startsWith('answered='))
  const kept = lines
    .slice(forced)
    .filter((line) => line.includes('gc=s '))
    .map((line) => field(line, 'new_space_survived'))
  const young = Math.max(...rows.map((line) => field(line, 'new_space_capacity')))
  const median = kept.sort((a, b) => a - b)[kept.length >> 1] ?? 0
  const answered = /answered=(\d+)/.exec(out)?.[1]
  return (
    `major collection after ${answered} answers; young generation up to ${young.toFixed(0)} MiB; ` +
    `a young collection after it kept ${median.toFixed(1)} MiB (median of ${kept.length})`
  )
}
