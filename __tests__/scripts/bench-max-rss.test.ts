// The bench's peak-RSS fallback where there is no /proc (macOS, Windows): a process preloaded with
// scripts/bench/max-rss.ts writes its own maxRSS (KiB) at exit.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { tempDir } from '../support/helpers.ts'

const preload = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scripts/bench/max-rss.ts')

test('a process preloaded with max-rss.ts writes its peak RSS at exit, at least what it held', async () => {
  const file = path.join(await tempDir(), 'max-rss')
  await promisify(execFile)(
    process.execPath,
    ['--import', pathToFileURL(preload).href, '-e', 'globalThis.held = Buffer.alloc(64 * 1024 * 1024, 1)'],
    { env: { ...process.env, GAMEHOST_BENCH_MAXRSS: file } },
  )
  const kib = Number(await readFile(file, 'utf8'))
  assert.ok(kib >= 64 * 1024, `${kib} KiB`)
})
