import { createHash } from 'node:crypto'
import {
  closeSync,
  fstatSync,
  lstatSync,
  openSync,
  realpathSync,
  statfsSync,
  type Dirent,
  type Stats,
} from 'node:fs'
import { lstat, open, readdir, realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import { isUtf8 } from 'node:buffer'
import mime from 'mime-types'
import { UsageError } from '../api/errors.ts'
import { OBJECT_KEY_MAX_BYTES, SITE_PATH_MAX_BYTES } from '../api/rules.ts'
import { Input } from '../inputs/constants.ts'
import type { FileDescriptor } from '../api/types.ts'
import { isOutOfDescriptors } from '../common/network.ts'
import { closeFile, lstatFile, openFile, readAt, type OpenFile } from './fd.ts'
import { descriptorLimitRemedy, NO_FOLLOW, readFlags } from './platform.ts'
import type { Logger } from '../common/logger.ts'
import { forEachLimited } from '../common/limit.ts'

export interface ArtifactFile {
  /** Path relative to the site root, `/` separators: the path the service knows the file by. */
  path: string
  /**
   * Where its bytes are read: the file itself, or for a link inside path, the real path of the file it
   * leads to. Opened without following a link there (see openScanned).
   */
  absolutePath: string
  size: number
  mtimeMs: number
  /**
   * The file the scan opened (device and inode): the hashing and the upload read only that file, and
   * fail naming it when another one (or a link) is at its path by then.
   */
  dev: number
  ino: number
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
  /** Opens the files (default fs.open): a test's may fail as a full descriptor table or a refusal would. */
  open?: OpenFile
  /** O_NOFOLLOW, or 0 as on Windows (default: the system's, platform.ts). */
  noFollow?: number
}

/** The files of a site, and the hidden names below its root left out (include-hidden false). */
export interface ScannedSite {
  files: ArtifactFile[]
  /**
   * The hidden files and folders left out, relative to the root, a folder's with a trailing `/` (its
   * content is not walked): none when include-hidden is true.
   */
  hidden: string[]
}

const HASH_BUFFER = 256 * 1024

/**
 * Finds the files of the site with their size, time and content type, opens each one (a file that
 * cannot be opened fails the scan, naming it, before anything is created) and records which file it
 * is, and checks the site's size, before reading any file.
 */
export async function scanArtifacts(options: CollectOptions): Promise<ArtifactFile[]> {
  return (await scanSite(options)).files
}

/** scanArtifacts, with the hidden files and folders it left out. */
export async function scanSite(options: CollectOptions): Promise<ScannedSite> {
  const { files, hidden } = await findFiles(options)
  const total = files.reduce((sum, f) => sum + f.size, 0)
  if (options.sizeLimit && total >= options.sizeLimit.bytes)
    throw new UsageError(options.sizeLimit.message(total))
  return { files, hidden }
}

/**
 * The SHA-256 (hex) of each file, in the order of `files`, hashed `workers` at a time, each read into
 * a buffer taken from a small free list (one per file running): no garbage and no pending promise
 * per file, so memory stays flat whatever the file count and size.
 */
export async function hashArtifacts(
  files: readonly ArtifactFile[],
  workers = 8,
  openWith?: OpenFile,
): Promise<string[]> {
  const digests = new Array<string>(files.length)
  const free: Buffer[] = []
  await forEachLimited(files, workers, async (file, i) => {
    const buffer = free.pop() ?? Buffer.allocUnsafe(HASH_BUFFER)
    try {
      const { sha256, size } = await hashFile(file, buffer, openWith)
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
export function fileDescriptors(
  files: ReadonlyArray<Pick<ArtifactFile, 'path' | 'size' | 'contentType'>>,
): FileDescriptor[] {
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
function checkPatterns(patterns: string[]): void {
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

/**
 * A pattern as the globbers get it: `\` is a separator on every platform, as on Windows, so that a
 * workflow's patterns select the same files on every runner (a glob character is matched literally
 * with a class: `[*]`).
 */
export const sitePattern = (pattern: string) => pattern.replaceAll('\\', '/')

async function findFiles(options: CollectOptions): Promise<ScannedSite> {
  const root = path.resolve(options.root)
  const realRoot = await checkRoot(root, options)
  const patterns = options.patterns.map(sitePattern)
  const hidden: string[] = []
  const plainTree = isEveryFile(patterns)
    ? await listPlainTree(root, options.includeHidden, hidden)
    : undefined
  const found = plainTree ?? (await globbed(root, { ...options, patterns }))
  if (!plainTree && !options.includeHidden) hidden.splice(0, hidden.length, ...(await listHidden(root)))
  const scan = scanOf(root, realRoot, plainTree !== undefined, options)
  const described = new Array<Described>(found.length)
  const describe = async (absolutePath: string, i: number) => {
    described[i] = await describeFile(absolutePath, scan)
  }
  // Synchronous calls have nothing to wait for together: one file after the other, no queue.
  if (scan.local) for (const [i, absolutePath] of found.entries()) await describe(absolutePath, i)
  else await forEachLimited(found, 16, describe)
  return { files: collected(described, options), hidden: hidden.sort() }
}

/**
 * The globber's paths, once none is a name that is not UTF-8: a globber that stats what it lists
 * fails on such a name (ENOENT, the path it read is not the file's), one that does not returns it.
 */
async function globbed(root: string, options: CollectOptions): Promise<string[]> {
  let found: string[]
  try {
    found = await options.glob(root, options.patterns, options.includeHidden)
  } catch (error) {
    const missing = (error as { path?: unknown }).path
    if (typeof missing === 'string') await refuseUndecodable(root, foldersOfUndecodable(root, [missing]))
    throw error
  }
  await refuseUndecodable(root, foldersOfUndecodable(root, found))
  return found
}

/** The root's real path, once it is known to be a folder fit to deploy and the patterns are checked. */
async function checkRoot(root: string, options: CollectOptions): Promise<string> {
  const rootStat = await stat(root).catch(() => undefined)
  if (!rootStat)
    throw new UsageError(`path: '${options.root}' does not exist: ${whereLooked(options.root, root)}`)
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
  return realRoot
}

/**
 * Where a relative path was looked for: the folder it names, and the working directory it is taken
 * from (a step's working-directory, or the checkout's root, is often not where the build is).
 */
function whereLooked(given: string, resolved: string): string {
  if (path.isAbsolute(given)) return 'there is no such folder'
  return `looked for ${resolved}, as it is relative to the working directory ${process.cwd()}`
}

/** What the scan of each file needs: where the root is, and how the files are looked at. */
interface Scan {
  root: string
  /** A real path inside the root (links are not followed out of it). */
  inside: (target: string) => boolean
  /** The paths came from a plain tree's listing, each a file by the kernel's word. */
  plainTree: boolean
  /** A local file system: synchronous calls (see scanOf). */
  local: boolean
  /** A folder's real path, looked up once. */
  realDir: (dir: string) => string | Promise<string>
  logger: CollectOptions['logger']
  open: OpenFile | undefined
  /** O_NOFOLLOW, or 0 where the system has none: then lstat before the open (openWithoutFollowing). */
  noFollow: number
}

function scanOf(root: string, realRoot: string, plainTree: boolean, options: CollectOptions): Scan {
  // On a local file system each file is opened, stated and closed synchronously: a few microseconds
  // each, where a round trip through the thread pool costs several times that. A network one (or a
  // test's open) keeps the asynchronous calls, which wait without holding up the process.
  const local = options.open === undefined && isLocalFileSystem(realRoot)
  // Where each file really is, to keep links from leading out of path: a directory's real path is
  // looked up once, a file's only when the file itself is a link. A plain tree's are not looked up:
  // its folders were listed as folders (no link) from the root down.
  const realDirs = new Map<string, string | Promise<string>>()
  const realDir = (dir: string) => {
    let real = realDirs.get(dir)
    if (real === undefined) realDirs.set(dir, (real = local ? realpathSync(dir) : realpath(dir)))
    return real
  }
  const inside = (target: string) => target === realRoot || target.startsWith(realRoot + path.sep)
  const noFollow = options.noFollow ?? NO_FOLLOW
  return { root, inside, plainTree, local, realDir, logger: options.logger, open: options.open, noFollow }
}

/**
 * What a found path came to: the file's record, or why it is not collected. Only regular files are
 * collected: a FIFO would hang the read that hashes or uploads it, a device would be uploaded as 0
 * bytes. The files this process cannot open (not readable, removed meanwhile, no descriptor left)
 * are refused too: each file is opened here, not first by the upload, once the site exists. Both are
 * refused, all of them named (`entry`: the path and why), before anything is created.
 */
type Described = ArtifactFile | Refused
type Refused = { kind: 'skipped' } | { kind: 'not-regular' | 'unopenable' | 'too-long'; entry: string }

const SKIPPED: Refused = { kind: 'skipped' }
const notRegular = (relative: string, stats: Stats): Refused => ({
  kind: 'not-regular',
  entry: `${relative} (${kindOf(stats)})`,
})
const unopenable = (relative: string, error: unknown): Refused => ({
  kind: 'unopenable',
  entry: `${relative} (${openFailure(error)})`,
})

async function describeFile(absolutePath: string, scan: Scan): Promise<Described> {
  const relative = relativeSitePath(scan.root, absolutePath)
  const bytes = Buffer.byteLength(relative)
  if (bytes > SITE_PATH_MAX_BYTES) return { kind: 'too-long', entry: `${relative} (${bytes} bytes)` }
  let readPath: string | Refused
  try {
    readPath = await whereToRead(absolutePath, relative, scan)
  } catch (error) {
    return unopenable(relative, error)
  }
  if (typeof readPath !== 'string') return readPath
  let opened: Stats
  try {
    opened =
      scan.local && scan.noFollow !== 0
        ? statOpenedSync(readPath, scan.noFollow)
        : await statOpened(readPath, scan.open, scan.noFollow)
  } catch (error) {
    return unopenable(relative, error)
  }
  if (!opened.isFile()) return notRegular(relative, opened)
  const contentType = contentTypeOf(relative)
  return {
    path: relative,
    absolutePath: readPath,
    size: opened.size,
    mtimeMs: opened.mtimeMs,
    dev: opened.dev,
    ino: opened.ino,
    ...(contentType ? { contentType } : {}),
  }
}

/** Where a found path's bytes are read: the file itself, or the file a link inside path leads to. */
async function whereToRead(absolutePath: string, relative: string, scan: Scan): Promise<string | Refused> {
  // A plain tree's listing has each entry's type from the kernel: a file, opened at once (one
  // round trip less than an lstat first). A globber's paths may be anything: a device is never opened.
  const stats = scan.plainTree
    ? undefined
    : scan.local
      ? lstatSync(absolutePath)
      : await lstatFile(absolutePath)
  if (stats?.isSymbolicLink()) return linkTarget(absolutePath, relative, scan)
  // A plain tree's folders were listed as folders, no link, from the root down: none leads outside.
  if (!scan.plainTree) {
    const real = path.join(await scan.realDir(path.dirname(absolutePath)), path.basename(absolutePath))
    if (!scan.inside(real)) {
      scan.logger.warning(`Skipping ${relative}: it is in a folder that leads outside path`)
      return SKIPPED
    }
  }
  if (stats && !stats.isFile()) return notRegular(relative, stats)
  return absolutePath
}

/** The file a link leads to, when it is a regular file inside path. */
async function linkTarget(link: string, relative: string, scan: Scan): Promise<string | Refused> {
  const real = await realpath(link).catch(() => undefined)
  if (real === undefined) {
    scan.logger.warning(`Skipping ${relative}: it is a link to nothing`)
    return SKIPPED
  }
  // Links are not followed out of path: one warning for the link, nothing walked behind it.
  if (!scan.inside(real)) {
    scan.logger.warning(`Skipping ${relative}: it is a link that leads outside path`)
    return SKIPPED
  }
  const target = await stat(real)
  if (target.isDirectory()) {
    scan.logger.warning(
      `Skipping ${relative}: it is a link to a folder inside path, whose files are collected where they are`,
    )
    return SKIPPED
  }
  return target.isFile() ? real : notRegular(relative, target)
}

/** The files found, in their order; refused, all named, when any is not a regular file or cannot be opened. */
function collected(described: readonly Described[], options: CollectOptions): ArtifactFile[] {
  const files: ArtifactFile[] = []
  const refused = { 'not-regular': [] as string[], unopenable: [] as string[], 'too-long': [] as string[] }
  for (const d of described) {
    if (!('kind' in d)) files.push(d)
    else if (d.kind !== 'skipped') refused[d.kind].push(d.entry)
  }
  const some = (list: string[]) =>
    `${list.slice(0, 10).join(', ')}${list.length > 10 ? `, and ${list.length - 10} more` : ''}`
  const them = (list: string[]) => (list.length === 1 ? 'it' : 'them')
  const long = refused['too-long'].sort()
  if (long.length) {
    throw new UsageError(
      `path: the store keeps each file at the key <upload id>/<path>, at most ${OBJECT_KEY_MAX_BYTES} bytes, so a ` +
        `path may have ${SITE_PATH_MAX_BYTES} bytes of UTF-8; ${long.length === 1 ? 'this one has' : `these ${long.length} have`} more: ` +
        `${some(long)}. Shorten ${them(long)} (a folder's name), or leave ${them(long)} out with files: '!<path>'`,
    )
  }
  const irregular = refused['not-regular'].sort()
  if (irregular.length) {
    throw new UsageError(
      `path: a site holds only regular files; ${irregular.length === 1 ? 'this is not one' : 'these are not'}: ` +
        `${some(irregular)}. Remove ${them(irregular)}, or leave ${them(irregular)} out with files: '!<path>'`,
    )
  }
  const closed = refused.unopenable.sort()
  if (closed.length) {
    throw new UsageError(
      `path: every file of the site is opened before anything is created, and ` +
        `${closed.length === 1 ? 'this one' : `these ${closed.length}`} could not be: ${some(closed)}. ` +
        `Make ${them(closed)} readable, or leave ${them(closed)} out with files: '!<path>'`,
    )
  }
  if (files.length === 0) {
    throw new UsageError(
      `files: no file under '${options.root}' matches ${options.patterns.map((p) => `'${p}'`).join(', ')}` +
        (options.includeHidden ? '' : ' (hidden files are skipped unless include-hidden is true)'),
    )
  }
  return files
}

/**
 * `absolutePath` relative to `root`, with `/` separators whatever the platform's (`pathApi`: the
 * platform's path module, path.win32 in a test): the path the manifest and the site know the file by.
 */
export function relativeSitePath(
  root: string,
  absolutePath: string,
  pathApi: typeof path.posix = path,
): string {
  const relative = absolutePath.startsWith(root + pathApi.sep)
    ? absolutePath.slice(root.length + 1)
    : pathApi.relative(root, absolutePath)
  return pathApi.sep === '/' ? relative : relative.split(pathApi.sep).join('/')
}

export const isHidden = (name: string) => name.startsWith('.')

/**
 * The stats of the file at `file` as opened for reading (no link followed there), closed again: what
 * the hashing and the upload will open. fstat on the descriptor is synchronous: the kernel has the
 * inode at hand once it is open (see assertUnchanged in upload.ts). The close is not waited for (a
 * read-only descriptor has nothing to flush): the next file's open queues behind it at once.
 */
async function statOpened(file: string, openWith: OpenFile | undefined, noFollow: number): Promise<Stats> {
  if (noFollow === 0) {
    const { fd, stats } = await openWithoutFollowing(file, openWith)
    closeFile(fd).catch(() => {})
    return stats
  }
  const fd = await (openWith ?? openFile)(file, readFlags(noFollow))
  try {
    return fstatSync(fd)
  } finally {
    closeFile(fd).catch(() => {})
  }
}

/**
 * Opens `file` where the system has no O_NOFOLLOW (Windows): refused as a link when its lstat is one,
 * and when the file opened is not the one lstat saw (a link swapped in between the two was followed:
 * its target has another device or inode). Both fail with ELOOP, as O_NOFOLLOW would.
 */
async function openWithoutFollowing(
  file: string,
  openWith: OpenFile | undefined,
): Promise<{ fd: number; stats: Stats }> {
  const seen = await lstatFile(file)
  if (seen.isSymbolicLink()) throw becameLink(file)
  const fd = await (openWith ?? openFile)(file, readFlags(0))
  const stats = fstatSync(fd)
  if (stats.dev !== seen.dev || stats.ino !== seen.ino) {
    closeSync(fd)
    throw becameLink(file)
  }
  return { fd, stats }
}

const becameLink = (file: string) =>
  Object.assign(new Error(`ELOOP: a link is at its path, not followed, open '${file}'`), {
    code: 'ELOOP',
    syscall: 'open',
    path: file,
  })

/** statOpened on a local file system: open, fstat and close without the thread pool. */
function statOpenedSync(file: string, noFollow: number): Stats {
  const fd = openSync(file, readFlags(noFollow))
  try {
    return fstatSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Linux's magic numbers (statfs(2)) of the file systems whose calls go over a network or through a
 * process of their own: NFS, SMB, CIFS, SMB2, Coda, AFS, Ceph, FUSE, 9P, GFS2, OCFS2, Lustre.
 */
const REMOTE_FILE_SYSTEMS = new Set([
  0x6969, 0x517b, 0xff534d42, 0xfe534d42, 0x73757245, 0x5346414f, 0x00c36400, 0x65735546, 0x01021997,
  0x01161970, 0x7461636f, 0x0bd00bd0,
])

/**
 * Whether the site's root is on a local file system, where a synchronous open, fstat and close take
 * microseconds. Only Linux's statfs names the file system; elsewhere (a runner's own disk) it is taken as local.
 */
function isLocalFileSystem(root: string): boolean {
  if (process.platform !== 'linux') return true
  try {
    return !REMOTE_FILE_SYSTEMS.has(Number(statfsSync(root).type))
  } catch {
    return false
  }
}

/** Why a file could not be opened, in words, with its code. */
function openFailure(error: unknown): string {
  const code = (error as { code?: unknown }).code
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return `${code}: this process may not read it`
    case 'ENOENT':
    case 'ENOTDIR':
      return `${code}: removed while the files were scanned`
    case 'ELOOP':
      return `${code}: it became a link while the files were scanned`
    case 'EMFILE':
    case 'ENFILE':
      return `${code}: out of file descriptors; ${descriptorLimitRemedy()}`
  }
  const message = error instanceof Error ? error.message : String(error)
  return typeof code === 'string' && !message.startsWith(code) ? `${code}: ${message}` : message
}

/** Is `stats` (an fstat or lstat) the very file the scan opened? */
export function isScannedFile(file: ArtifactFile, stats: Stats): boolean {
  return stats.isFile() && stats.ino === file.ino && stats.dev === file.dev
}

/**
 * Opens a file the scan found, to read it: only the file the scan opened (the same device and inode),
 * never a link put at its path since (not followed: O_NOFOLLOW), nor another file; either fails naming
 * it before a byte is read. A full descriptor table (EMFILE, ENFILE) is thrown as it is, for the
 * caller to wait and retry. A change of its size or time is the caller's to check once it has read.
 */
export async function openScanned(
  file: ArtifactFile,
  openWith?: OpenFile,
  noFollow: number = NO_FOLLOW,
): Promise<number> {
  const fd = await openAtScannedPath(file, openWith, noFollow)
  try {
    assertScannedFile(file, fstatSync(fd))
  } catch (error) {
    closeSync(fd)
    throw error
  }
  return fd
}

/**
 * openScanned without its fstat: for a reader that fstats once after its read and checks the file's
 * identity then (assertScannedFile), before any byte it read is used. Without O_NOFOLLOW (`noFollow`
 * 0, Windows) a link at the path is refused by an lstat first; one swapped in after that lstat is
 * followed, and the identity check refuses the file it leads to (not the scanned one).
 */
export async function openAtScannedPath(
  file: ArtifactFile,
  openWith?: OpenFile,
  noFollow: number = NO_FOLLOW,
): Promise<number> {
  try {
    if (noFollow === 0 && (await lstatFile(file.absolutePath)).isSymbolicLink()) {
      throw becameLink(file.absolutePath)
    }
    return await (openWith ?? openFile)(file.absolutePath, readFlags(noFollow))
  } catch (error) {
    if (isOutOfDescriptors(error)) throw error
    const code = (error as { code?: unknown }).code
    const what =
      code === 'ELOOP'
        ? 'was replaced by a link after it was scanned; the link is not followed'
        : code === 'ENOENT' || code === 'ENOTDIR'
          ? 'was removed after it was scanned'
          : 'can no longer be opened'
    throw new Error(`${file.path} ${what} (${openFailure(error)})`, { cause: error })
  }
}

/** Fails naming the file unless `stats` (an fstat) is the very file the scan opened. */
export function assertScannedFile(file: ArtifactFile, stats: Stats): void {
  if (!isScannedFile(file, stats)) {
    throw new Error(
      `${file.path} was replaced after it was scanned: ${stats.isFile() ? 'another file' : `something else (${kindOf(stats)})`} is at its path now`,
    )
  }
}

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
async function listPlainTree(
  root: string,
  includeHidden: boolean,
  hidden: string[],
): Promise<string[] | undefined> {
  const files: string[] = []
  let level = [root]
  while (level.length) {
    const next: string[] = []
    // Listed LISTING_AHEAD folders ahead and taken in order, so that the order is the file system's,
    // not the order reads finish in, and only the listings of those few are held: one per folder of
    // a level, kept until the level's last was read, outlived young collections in a tree of
    // thousands of folders and made V8 double its young generation (BENCHMARKS.md).
    const ahead = level.slice(0, LISTING_AHEAD).map(listFolder)
    for (let i = 0; i < level.length; i++) {
      const entries = await ahead[i % LISTING_AHEAD]!
      if (i + LISTING_AHEAD < level.length) ahead[i % LISTING_AHEAD] = listFolder(level[i + LISTING_AHEAD]!)
      for (const entry of entries) {
        if (entry.name.includes(REPLACEMENT)) await refuseUndecodable(root, [level[i]!])
        if (!includeHidden && isHidden(entry.name)) {
          hidden.push(hiddenEntry(root, level[i]!, entry))
          continue
        }
        // A listed name is one segment of a normalised path: path.join's normalising built each path
        // of pieces, megabytes that a large tree's paths kept until they were used.
        const entryPath = `${level[i]!}${path.sep}${entry.name}`
        if (entry.isFile()) files.push(entryPath)
        else if (entry.isDirectory()) next.push(entryPath)
        else return undefined
      }
    }
    level = next
  }
  return files
}

const LISTING_AHEAD = 16

/** What a name's bytes that are not UTF-8 are decoded to: such a path cannot be opened again. */
const REPLACEMENT = '\uFFFD'

/**
 * The folders to look into for names that are not UTF-8: those holding a segment of a found path
 * that has a replacement character (the rest of such a path may not exist as written).
 */
function foldersOfUndecodable(root: string, found: readonly string[]): string[] {
  const folders = new Set<string>()
  for (const file of found) {
    if (!file.includes(REPLACEMENT)) continue
    let folder = root
    for (const segment of relativeSitePath(root, file).split('/')) {
      if (segment.includes(REPLACEMENT)) {
        folders.add(folder)
        break
      }
      folder = path.join(folder, segment)
    }
  }
  return [...folders]
}

/**
 * Refuses the site when one of `folders` holds a name that is not UTF-8, naming each by its bytes
 * (escaped): the service knows files by UTF-8 paths, and Node reads such a name with replacement
 * characters, a path that no longer leads to the file. A name with a real U+FFFD passes.
 */
async function refuseUndecodable(root: string, folders: readonly string[]): Promise<void> {
  const names: string[] = []
  for (const folder of folders) {
    const prefix = folder === root ? '' : `${relativeSitePath(root, folder)}/`
    for (const name of await readdir(folder, { encoding: 'buffer' })) {
      if (!isUtf8(name)) names.push(prefix + escapeBytes(name))
    }
  }
  if (!names.length) return
  names.sort()
  const one = names.length === 1
  throw new UsageError(
    `path: the service knows each file by its path in UTF-8, and ${one ? 'this name is' : `these ${names.length} names are`} ` +
      `not UTF-8 (shown by their bytes): ${names.slice(0, 10).join(', ')}${names.length > 10 ? `, and ${names.length - 10} more` : ''}. ` +
      `Rename ${one ? 'it' : 'them'} in UTF-8 (a build tool on another system may have written Latin-1)`,
  )
}

/** A name's bytes as text: printable ASCII as it is, every other byte as \xHH. */
function escapeBytes(name: Buffer): string {
  let text = ''
  for (const byte of name) {
    text +=
      byte >= 0x20 && byte < 0x7f && byte !== 0x5c
        ? String.fromCharCode(byte)
        : `\\x${byte.toString(16).padStart(2, '0')}`
  }
  return text
}

/** A hidden entry of `dir` as it is reported: relative to root, `/` separators, a folder's with a `/` after it. */
function hiddenEntry(root: string, dir: string, entry: Dirent): string {
  const relative = relativeSitePath(root, `${dir}${path.sep}${entry.name}`)
  return entry.isDirectory() ? `${relative}/` : relative
}

/**
 * The hidden files and folders below root, for a site a globber listed: every folder but the hidden
 * ones walked (a .git is one entry, not its thousands of files), links not followed.
 */
async function listHidden(root: string): Promise<string[]> {
  const hidden: string[] = []
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
    for (const entry of entries) {
      if (isHidden(entry.name)) hidden.push(hiddenEntry(root, dir, entry))
      else if (entry.isDirectory()) await walk(`${dir}${path.sep}${entry.name}`)
    }
  }
  await walk(root)
  return hidden
}

/** The line that says which hidden files and folders were left out, and how to upload them. */
export function hiddenLeftOut(hidden: readonly string[]): string | undefined {
  if (!hidden.length) return undefined
  const shown = hidden.slice(0, 5).join(', ')
  const more = hidden.length > 5 ? `, and ${hidden.length - 5} more` : ''
  const folders = hidden.filter((name) => name.endsWith('/')).length
  const counted = (count: number, noun: string) => `${count} hidden ${noun}${count === 1 ? '' : 's'}`
  const what = [
    ...(hidden.length > folders ? [counted(hidden.length - folders, 'file')] : []),
    ...(folders ? [counted(folders, 'folder')] : []),
  ].join(' and ')
  return `${what} left out (${Input.IncludeHidden}: true to upload them): ${shown}${more}`
}

/** A folder's entries; a listing left unread (the tree was not plain) fails without an unhandled rejection. */
function listFolder(dir: string): Promise<Dirent[]> {
  const listing = readdir(dir, { withFileTypes: true })
  listing.catch(() => {})
  return listing
}

/**
 * SHA-256 of a file, read into the caller's buffer: hashing leaves no garbage, whatever the file size.
 * A read that comes back short once the size found by the scan is reached is the end of the file:
 * no further read to hear it (a quarter of the calls for small files). Anything else reads on to the
 * end, so a file that grew is still seen to differ.
 */
async function hashFile(
  file: ArtifactFile,
  buffer: Buffer,
  openWith: OpenFile | undefined,
): Promise<{ sha256: string; size: number }> {
  const expectedSize = file.size
  const fd = await openScanned(file, openWith)
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
