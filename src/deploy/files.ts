import { createHash } from 'node:crypto'
import type { Stats } from 'node:fs'
import { lstat, open, readdir, realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import mime from 'mime-types'
import { UsageError } from '../api/errors.ts'
import type { FileDescriptor } from '../api/types.ts'
import { closeFile, lstatFile, openForReading, readAt } from './fd.ts'
import type { Logger } from '../common/logger.ts'
import { forEachLimited } from '../common/limit.ts'

export interface ArtifactFile {
  /** Path relative to the site root, `/` separators: the path the service knows the file by. */
  path: string
  absolutePath: string
  size: number
  mtimeMs: number
  /** With charset for text types; absent when the extension is unknown. */
  contentType?: string
}

/** A file of the manifest: the scan's record and the SHA-256 of its bytes (hex). */
export interface ManifestFile extends ArtifactFile {
  sha256: string
}

export interface Manifest {
  files: ManifestFile[]
  fileCount: number
  totalBytes: number
  /**
   * `sha256:` + SHA-256 over one JSON line `[path,size,sha256]` per file, sorted by path; a file whose
   * content type is not its extension's (one web-engine set) has it at the end of its line, so that
   * an unchanged build served otherwise is a new site.
   */
  digest: string
}

/**
 * Lists the files under `root` that match `patterns` (relative to root, `!` to exclude, a later
 * pattern overriding an earlier one, a folder standing for everything below it), as absolute paths,
 * without following links, hidden names below root left out unless `includeHidden`. Handed in by
 * each face: the action's is @actions/glob, the CLI's Node's own glob.
 */
export type Globber = (root: string, patterns: string[], includeHidden: boolean) => Promise<string[]>

export interface CollectOptions {
  root: string
  /** Glob patterns relative to root, `!` to exclude. */
  patterns: string[]
  glob: Globber
  includeHidden: boolean
  logger: Pick<Logger, 'warning' | 'debug'>
  /** Refuses a site whose files add up to this many bytes or more, before hashing anything. */
  sizeLimit?: { bytes: number; message: (total: number) => string }
  /** Files hashed at once (default 8). */
  hashConcurrency?: number
}

const HASH_BUFFER = 256 * 1024

/** Finds the files of the site, hashes each one, and builds the manifest. */
export async function collectArtifacts(options: CollectOptions): Promise<Manifest> {
  const files = await scanArtifacts(options)
  return buildManifest(files, await hashArtifacts(files, options.hashConcurrency))
}

/**
 * Finds the files of the site with their size, time and content type, and checks the site's size,
 * before reading any file.
 */
export async function scanArtifacts(options: CollectOptions): Promise<ArtifactFile[]> {
  const files = await findFiles(options)
  const total = files.reduce((sum, f) => sum + f.size, 0)
  if (options.sizeLimit && total >= options.sizeLimit.bytes)
    throw new UsageError(options.sizeLimit.message(total))
  return files
}

/**
 * The SHA-256 (hex) of each file, in the order of `files`, hashed `workers` at a time, each read into
 * a buffer taken from a small free list (one per file running): no garbage and no pending promise
 * per file, so memory stays flat whatever the file count and size.
 */
export async function hashArtifacts(files: readonly ArtifactFile[], workers = 8): Promise<string[]> {
  const digests = new Array<string>(files.length)
  const free: Buffer[] = []
  await forEachLimited(files, workers, async (file, i) => {
    const buffer = free.pop() ?? Buffer.allocUnsafe(HASH_BUFFER)
    try {
      const { sha256, size } = await hashFile(file.absolutePath, buffer, file.size)
      if (size !== file.size) {
        throw new Error(`${file.path} changed while it was hashed (size ${file.size} -> ${size})`)
      }
      digests[i] = sha256
    } finally {
      free.push(buffer)
    }
  })
  return digests
}

/** The manifest of `files`, given the SHA-256 of each (hex, in the order of `files`). */
export function buildManifest(files: readonly ArtifactFile[], sha256: readonly string[]): Manifest {
  const sorted = files
    .map((file, i): ManifestFile => ({ ...file, sha256: sha256[i]! }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const digest = createHash('sha256')
  for (const f of sorted) {
    const line = [f.path, f.size, f.sha256]
    if (f.contentType !== contentTypeOf(f.path)) line.push(f.contentType ?? '')
    digest.update(JSON.stringify(line) + '\n')
  }
  return {
    files: sorted,
    fileCount: sorted.length,
    totalBytes: sorted.reduce((sum, f) => sum + f.size, 0),
    digest: `sha256:${digest.digest('hex')}`,
  }
}

/** The file descriptors `createGameCdnSite` takes. */
export function fileDescriptors(files: ArtifactFile[]): FileDescriptor[] {
  return files.map((f) => ({
    path: f.path,
    content_length: f.size,
    ...(f.contentType ? { content_type: f.contentType } : {}),
  }))
}

/**
 * Writes the manifest as JSON (without absolute paths), one file a line, and returns where. It is
 * written a batch of lines at a time: one string of the whole and the objects to make it were the
 * peak of a big site's deploy.
 */
export async function writeManifest(manifest: Manifest, file: string): Promise<string> {
  const handle = await open(file, 'w')
  try {
    const head = { digest: manifest.digest, fileCount: manifest.fileCount, totalBytes: manifest.totalBytes }
    await handle.write(`${JSON.stringify(head, null, 2).slice(0, -2)},\n  "files": [`)
    const { files } = manifest
    for (let start = 0; start < files.length; start += MANIFEST_BATCH) {
      let lines = ''
      for (let i = start; i < Math.min(start + MANIFEST_BATCH, files.length); i++) {
        const { path: p, size, sha256, contentType } = files[i]!
        lines += `${i ? ',' : ''}\n    ${JSON.stringify({ path: p, size, sha256, contentType })}`
      }
      await handle.write(lines)
    }
    await handle.write(`${files.length ? '\n  ' : ''}]\n}\n`)
  } finally {
    await handle.close()
  }
  return file
}

const MANIFEST_BATCH = 500

const contentTypes = new Map<string, string | undefined>()

/** One string per extension, however many files share it (mime-types builds a new one each call). */
export function contentTypeOf(file: string): string | undefined {
  const extension = path.extname(file).toLowerCase()
  if (!contentTypes.has(extension)) contentTypes.set(extension, mime.contentType(extension) || undefined)
  return contentTypes.get(extension)
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

async function findFiles(options: CollectOptions): Promise<ArtifactFile[]> {
  const root = path.resolve(options.root)
  const rootStat = await stat(root).catch(() => undefined)
  if (!rootStat) throw new UsageError(`path: '${options.root}' does not exist`)
  if (!rootStat.isDirectory())
    throw new UsageError(`path: '${options.root}' is a file; give the folder of the site`)
  checkPatterns(options.patterns)
  const realRoot = await realpath(root)
  if (realRoot === path.parse(realRoot).root) {
    throw new UsageError(
      `path: '${options.root}' is the root of the file system; give the folder of the built site (say 'dist')`,
    )
  }
  const gitEntry = await lstat(path.join(root, '.git')).catch(() => undefined)
  if (gitEntry && options.includeHidden) {
    throw new UsageError(
      `path: '${options.root}' is the root of a git repository, and include-hidden would upload its .git ` +
        '(the whole history): give the folder of the built site (say dist), or set include-hidden: false',
    )
  }
  if (gitEntry) {
    options.logger.warning(
      `path: '${options.root}' is the root of a git repository (it holds .git): every file of the repository ` +
        'is deployed, .git and other hidden files left out. Give the folder of the built site (say dist) if that is not meant.',
    )
  }

  const found =
    (isEveryFile(options.patterns) ? await listPlainTree(root, options.includeHidden) : undefined) ??
    (await options.glob(root, options.patterns, options.includeHidden))

  // Where each file really is, to keep links from leading out of path: a directory's real path is
  // looked up once, a file's only when the file itself is a link.
  const realDirs = new Map<string, Promise<string>>()
  const realDir = (dir: string) => {
    let real = realDirs.get(dir)
    if (!real) realDirs.set(dir, (real = realpath(dir)))
    return real
  }
  const inside = (target: string) => target === realRoot || target.startsWith(realRoot + path.sep)
  const described = new Array<ArtifactFile | undefined>(found.length)
  // Only regular files are collected: a FIFO would hang the read that hashes or uploads it, a
  // device would be uploaded as 0 bytes. They are refused, all of them named, before anything is created.
  const notRegular: string[] = []
  await forEachLimited(found, 16, async (absolutePath, i) => {
    let stats = await lstatFile(absolutePath)
    const relative = path.relative(root, absolutePath).split(path.sep).join('/')
    if (stats.isSymbolicLink()) {
      const real = await realpath(absolutePath).catch(() => undefined)
      if (real === undefined) {
        options.logger.warning(`Skipping ${relative}: it is a link to nothing`)
        return
      }
      // Links are not followed out of path: one warning for the link, nothing walked behind it.
      if (!inside(real)) {
        options.logger.warning(`Skipping ${relative}: it is a link that leads outside path`)
        return
      }
      stats = await stat(absolutePath)
      if (stats.isDirectory()) {
        options.logger.warning(
          `Skipping ${relative}: it is a link to a folder inside path, whose files are collected where they are`,
        )
        return
      }
    } else if (!inside(path.join(await realDir(path.dirname(absolutePath)), path.basename(absolutePath)))) {
      options.logger.warning(`Skipping ${relative}: it is in a folder that leads outside path`)
      return
    }
    if (!stats.isFile()) {
      notRegular.push(`${relative} (${kindOf(stats)})`)
      return
    }
    const contentType = contentTypeOf(relative)
    described[i] = {
      path: relative,
      absolutePath,
      size: stats.size,
      mtimeMs: stats.mtimeMs,
      ...(contentType ? { contentType } : {}),
    }
  })
  if (notRegular.length) {
    notRegular.sort()
    throw new UsageError(
      `path: a site holds only regular files; ${notRegular.length === 1 ? 'this is not one' : 'these are not'}: ` +
        `${notRegular.slice(0, 10).join(', ')}${notRegular.length > 10 ? `, and ${notRegular.length - 10} more` : ''}. ` +
        `Remove ${notRegular.length === 1 ? 'it' : 'them'}, or leave ${notRegular.length === 1 ? 'it' : 'them'} out with files: '!<path>'`,
    )
  }
  const files = described.filter((f): f is ArtifactFile => f !== undefined)
  if (files.length === 0) {
    throw new UsageError(
      `files: no file under '${options.root}' matches ${options.patterns.map((p) => `'${p}'`).join(', ')}` +
        (options.includeHidden ? '' : ' (hidden files are skipped unless include-hidden is true)'),
    )
  }
  return files
}

export const isHidden = (name: string) => name.startsWith('.')

function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO'
  if (stats.isSocket()) return 'a socket'
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device'
  return 'not a regular file'
}

const isEveryFile = (patterns: string[]) => patterns.length === 1 && patterns[0] === '**'

/**
 * Every file under root when the tree holds only plain files and folders, as `**` finds them; undefined
 * as soon as it meets anything else (a link, a device), and the globber decides. Why: a globber stats
 * one entry at a time, where the types readdir gives need no stat at all (BENCHMARKS.md).
 */
async function listPlainTree(root: string, includeHidden: boolean): Promise<string[] | undefined> {
  const files: string[] = []
  let level = [root]
  while (level.length) {
    // Kept per directory, so that the order is the file system's, not the order reads finish in.
    const listings = new Array<{ files: string[]; dirs: string[] }>(level.length)
    let plain = true
    await forEachLimited(level, 16, async (dir, index) => {
      const listing: { files: string[]; dirs: string[] } = { files: [], dirs: [] }
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        if (!includeHidden && isHidden(entry.name)) continue
        const entryPath = path.join(dir, entry.name)
        if (entry.isFile()) listing.files.push(entryPath)
        else if (entry.isDirectory()) listing.dirs.push(entryPath)
        else plain = false
      }
      listings[index] = listing
    })
    if (!plain) return undefined
    for (const listing of listings) for (const file of listing.files) files.push(file)
    level = listings.flatMap((listing) => listing.dirs)
  }
  return files
}

/**
 * SHA-256 of a file, read into the caller's buffer: hashing leaves no garbage, whatever the file size.
 * A read that comes back short once the size found by the scan is reached is the end of the file:
 * no further read to hear it (a quarter of the calls for small files). Anything else reads on to the
 * end, so a file that grew is still seen to differ.
 */
async function hashFile(
  file: string,
  buffer: Buffer,
  expectedSize: number,
): Promise<{ sha256: string; size: number }> {
  const fd = await openForReading(file)
  try {
    const hash = createHash('sha256')
    let size = 0
    for (;;) {
      const bytesRead = await readAt(fd, buffer, 0, buffer.length, size)
      hash.update(buffer.subarray(0, bytesRead))
      size += bytesRead
      if (bytesRead === 0 || (bytesRead < buffer.length && size === expectedSize)) break
    }
    return { sha256: hash.digest('hex'), size }
  } finally {
    await closeFile(fd)
  }
}
