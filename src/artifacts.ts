import { createHash } from 'node:crypto'
import { createReadStream, type Stats } from 'node:fs'
import { readFile, realpath, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import * as glob from '@actions/glob'
import mime from 'mime-types'
import pLimit from 'p-limit'
import { UsageError } from './api/errors.ts'
import type { FileDescriptor } from './api/types.ts'
import type { Logger } from './logger.ts'

export interface ArtifactFile {
  /** Path relative to the site root, `/` separators: the path the service knows the file by. */
  path: string
  absolutePath: string
  size: number
  mtimeMs: number
  sha256: string
  /** With charset for text types; absent when the extension is unknown. */
  contentType?: string
}

export interface Manifest {
  files: ArtifactFile[]
  fileCount: number
  totalBytes: number
  /** `sha256:` + SHA-256 over one JSON line `[path,size,sha256]` per file, sorted by path. */
  digest: string
}

export interface CollectOptions {
  root: string
  /** Glob patterns relative to root, `!` to exclude. */
  patterns: string[]
  includeHidden: boolean
  logger: Pick<Logger, 'warning' | 'debug'>
  /** Refuses a site whose files add up to this many bytes or more, before hashing anything. */
  sizeLimit?: { bytes: number; message: (total: number) => string }
  /** Files hashed at once. */
  hashConcurrency?: number
}

const SMALL_FILE = 1024 * 1024
const READ_BUFFER = 1024 * 1024

/** Finds the files of the site, hashes each one while streaming it, and builds the manifest. */
export async function collectArtifacts(options: CollectOptions): Promise<Manifest> {
  const found = await findFiles(options)
  const limit = pLimit(options.hashConcurrency ?? 8)
  const sized = await Promise.all(
    found.map((f) => limit(async () => ({ ...f, stats: await stat(f.absolutePath) }))),
  )
  const total = sized.reduce((sum, f) => sum + f.stats.size, 0)
  if (options.sizeLimit && total >= options.sizeLimit.bytes)
    throw new UsageError(options.sizeLimit.message(total))
  const files = await Promise.all(
    sized.map((f) => limit(() => describeFile(f.path, f.absolutePath, f.stats))),
  )
  return buildManifest(files)
}

export function buildManifest(files: ArtifactFile[]): Manifest {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const digest = createHash('sha256')
  for (const f of sorted) digest.update(JSON.stringify([f.path, f.size, f.sha256]) + '\n')
  return {
    files: sorted,
    fileCount: sorted.length,
    totalBytes: sorted.reduce((sum, f) => sum + f.size, 0),
    digest: `sha256:${digest.digest('hex')}`,
  }
}

/** The file descriptors `createGameCdnSite` takes. */
export function fileDescriptors(manifest: Manifest): FileDescriptor[] {
  return manifest.files.map((f) => ({
    path: f.path,
    content_length: f.size,
    ...(f.contentType ? { content_type: f.contentType } : {}),
  }))
}

/** Writes the manifest as JSON (without absolute paths) and returns where. */
export async function writeManifest(manifest: Manifest, file: string): Promise<string> {
  const document = {
    digest: manifest.digest,
    fileCount: manifest.fileCount,
    totalBytes: manifest.totalBytes,
    files: manifest.files.map(({ path: p, size, sha256, contentType }) => ({
      path: p,
      size,
      sha256,
      contentType,
    })),
  }
  await writeFile(file, JSON.stringify(document, null, 2) + '\n')
  return file
}

export function contentTypeOf(file: string): string | undefined {
  return mime.contentType(path.extname(file)) || undefined
}

/** Checks patterns: relative, and never reaching above the root. */
export function checkPatterns(patterns: string[]): void {
  for (const raw of patterns) {
    const pattern = raw.startsWith('!') ? raw.slice(1) : raw
    if (path.isAbsolute(pattern) || /^[a-zA-Z]:/.test(pattern)) {
      throw new UsageError(`files: '${raw}' is absolute; patterns are relative to path`)
    }
    if (pattern.split(/[\\/]/).includes('..')) {
      throw new UsageError(`files: '${raw}' reaches outside path; patterns may not contain '..'`)
    }
  }
}

async function findFiles(options: CollectOptions): Promise<Array<{ path: string; absolutePath: string }>> {
  const root = path.resolve(options.root)
  const rootStat = await stat(root).catch(() => undefined)
  if (!rootStat) throw new UsageError(`path: '${options.root}' does not exist`)
  if (!rootStat.isDirectory())
    throw new UsageError(`path: '${options.root}' is a file; give the folder of the site`)
  checkPatterns(options.patterns)
  const realRoot = await realpath(root)

  const patterns = options.patterns.map((p) =>
    p.startsWith('!') ? `!${path.join(root, p.slice(1))}` : path.join(root, p),
  )
  const globber = await glob.create(patterns.join('\n'), {
    matchDirectories: false,
    followSymbolicLinks: true,
    implicitDescendants: true,
    excludeHiddenFiles: !options.includeHidden,
  })
  const files: Array<{ path: string; absolutePath: string }> = []
  for await (const absolutePath of globber.globGenerator()) {
    const target = await realpath(absolutePath)
    if (target !== realRoot && !target.startsWith(realRoot + path.sep)) {
      options.logger.warning(
        `Skipping ${path.relative(root, absolutePath)}: it is a link that leads outside path`,
      )
      continue
    }
    const relative = path.relative(root, absolutePath).split(path.sep).join('/')
    files.push({ path: relative, absolutePath })
  }
  if (files.length === 0) {
    throw new UsageError(
      `files: no file under '${options.root}' matches ${options.patterns.map((p) => `'${p}'`).join(', ')}` +
        (options.includeHidden ? '' : ' (hidden files are skipped unless include-hidden is true)'),
    )
  }
  return files
}

async function describeFile(
  relativePath: string,
  absolutePath: string,
  before: Stats,
): Promise<ArtifactFile> {
  const hash = createHash('sha256')
  if (before.size <= SMALL_FILE) hash.update(await readFile(absolutePath))
  else await pipeline(createReadStream(absolutePath, { highWaterMark: READ_BUFFER }), hash)
  const contentType = contentTypeOf(relativePath)
  return {
    path: relativePath,
    absolutePath,
    size: before.size,
    mtimeMs: before.mtimeMs,
    sha256: hash.digest('hex'),
    ...(contentType ? { contentType } : {}),
  }
}
