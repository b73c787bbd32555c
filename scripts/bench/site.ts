// Synthetic sites for the benchmark: small files of 1 to 32 KiB (sizes from a seeded PRNG, so every
// run measures the same site) and big files that the service uploads in parts.
import { randomBytes } from 'node:crypto'
import { mkdir, open, writeFile } from 'node:fs/promises'
import path from 'node:path'

export interface SiteSpec {
  smallFiles: number
  bigFiles: number
  bigBytes: number
  /** Small files a folder (default 100); 0: all of them in one folder. */
  perFolder?: number
}

const EXTENSIONS = ['js', 'png', 'json', 'css', 'wasm', 'html', 'ogg', 'data']
const CHUNK = 1024 * 1024

export async function buildSite(dir: string, spec: SiteSpec): Promise<{ files: number; bytes: number }> {
  const pool = randomBytes(8 * CHUNK)
  let seed = 0x9e3779b9
  const next = () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  let bytes = 0
  const perFolder = spec.perFolder ?? 100
  for (let i = 0; i < spec.smallFiles; i++) {
    const size = 1024 + Math.floor(next() * 31 * 1024)
    const folder = perFolder ? String(Math.floor(i / perFolder)) : ''
    const file = path.join(dir, 'assets', folder, `asset-${i}.${EXTENSIONS[i % EXTENSIONS.length]}`)
    if (perFolder ? i % perFolder === 0 : i === 0) await mkdir(path.dirname(file), { recursive: true })
    const at = Math.floor(next() * (pool.length - size))
    await writeFile(file, pool.subarray(at, at + size))
    bytes += size
  }
  await mkdir(dir, { recursive: true })
  // A game's page: the deploy refuses a site without one (require-index).
  const page = '<!doctype html><title>bench</title><canvas></canvas>\n'
  await writeFile(path.join(dir, 'index.html'), page)
  bytes += page.length
  for (let i = 0; i < spec.bigFiles; i++) {
    const handle = await open(path.join(dir, `build-${i}.data`), 'w')
    try {
      for (let written = 0; written < spec.bigBytes; written += CHUNK) {
        const size = Math.min(CHUNK, spec.bigBytes - written)
        const at = Math.floor(next() * (pool.length - size))
        await handle.write(pool.subarray(at, at + size))
      }
    } finally {
      await handle.close()
    }
    bytes += spec.bigBytes
  }
  return { files: spec.smallFiles + spec.bigFiles + 1, bytes }
}
