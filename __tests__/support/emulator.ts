// The emulator as the tests outside __tests__/emulator start it: at the real service's defaults (issue
// 30), but for the publish delay, which only makes a test wait (the tests that take it are in
// __tests__/bundles/live-at-defaults.test.ts and __tests__/deploy/live/verify.pipeline.test.ts).

import { get, type IncomingHttpHeaders } from 'node:http'
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/index.ts'

export const FAST_FOR_TESTS = { publishDelayMs: 0 } as const satisfies EmulatorOptions

/** startEmulator with FAST_FOR_TESTS under the test's own options. */
export function startTestEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  return startEmulator({ ...FAST_FOR_TESTS, ...options })
}

/** What `fn` made the emulator do: the object store's PUTs and the CDN sites created. */
export async function writesDuring<T>(
  emulator: Emulator,
  fn: () => Promise<T>,
): Promise<{ value: T; puts: number; sites: number }> {
  const from = emulator.requests.length
  const value = await fn()
  const made = emulator.requests.slice(from)
  return {
    value,
    puts: made.filter((r) => r.method === 'PUT' && !r.path.startsWith('/cloud/')).length,
    sites: made.filter((r) => r.method === 'POST' && r.path.endsWith('/cdn/sites')).length,
  }
}

/** GET a URL of a *.localhost host (which Node does not resolve) from 127.0.0.1, its bytes whole. */
export function bytesAt(
  url: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  const target = new URL(url)
  return new Promise((resolve, reject) => {
    const req = get(
      { host: '127.0.0.1', port: target.port, path: target.pathname, headers: { host: target.host } },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
        )
        res.on('error', reject)
      },
    )
    req.on('error', reject)
  })
}
