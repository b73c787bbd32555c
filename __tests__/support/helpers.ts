import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer as createNetServer, type AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after } from 'node:test'
import { buildManifest, type ArtifactFile, type Manifest } from '../../src/deploy/collect/files.ts'
import { hashArtifacts } from '../../src/deploy/collect/hash.ts'
import { scanSite, type ScanOptions } from '../../src/deploy/collect/scan.ts'

const created: string[] = []
// Registered when a test file imports this module, so at the file's root: it runs after every test.
after(() => Promise.all(created.map((dir) => rm(dir, { recursive: true, force: true }))))

/** A fresh temp folder, removed after the test file. */
export async function tempDir(prefix = 'gamehost-test-'): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix))
  created.push(dir)
  return dir
}

/** Writes files (relative path -> content or size in random bytes) under root; returns their bytes. */
export async function writeTree(
  root: string,
  files: Record<string, string | Buffer | number>,
): Promise<Map<string, Buffer>> {
  const written = new Map<string, Buffer>()
  for (const [relative, content] of Object.entries(files)) {
    const bytes = typeof content === 'number' ? randomBytes(content) : Buffer.from(content)
    const file = path.join(root, relative)
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(file, bytes)
    written.set(relative, bytes)
  }
  return written
}

/** A site of `count` small files of several types, plus `big` (a file over the multipart threshold). */
export function siteFiles(
  count: number,
  big?: { name: string; size: number },
): Record<string, string | number> {
  const files: Record<string, string | number> = {
    'index.html': '<!doctype html><title>game</title><script src="game.js"></script>',
    'game.js': 'console.log("game")',
    'style.css': 'body { margin: 0 }',
    'game.wasm': 4096,
  }
  for (let i = 0; Object.keys(files).length < count; i++) {
    const ext = ['png', 'json', 'txt', 'data'][i % 4]
    files[`assets/${Math.floor(i / 20)}/asset-${i}.${ext}`] =
      ext === 'json' ? `{"i":${i}}` : 256 + ((i * 37) % 3000)
  }
  if (big) files[big.name] = big.size
  return files
}

export function getter(values: Record<string, string>): (name: string) => string {
  return (name) => values[name] ?? ''
}

/** A local port nothing listens on (one the system just gave out and took back): connections are refused. */
export async function deadPort(): Promise<number> {
  const server = createNetServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** The files the scan finds, without what it left out. */
export async function scanArtifacts(options: ScanOptions): Promise<ArtifactFile[]> {
  return (await scanSite(options)).files
}

/** Finds the files of the site, hashes each one, and builds the manifest: the deploy's collect and hash, at once. */
export async function collectArtifacts(options: ScanOptions): Promise<Manifest> {
  const files = await scanArtifacts(options)
  return buildManifest(files, await hashArtifacts(files, options.open))
}
