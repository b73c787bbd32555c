// The scan of a site's folder: each file the walk found opened and recorded with the file it is, and
// every refusal said before anything is created.

import { lstatSync, statfsSync, type Stats } from 'node:fs'
import { lstat, realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import { UsageError } from '../api/errors.ts'
import { OBJECT_KEY_MAX_BYTES, SITE_PATH_MAX_BYTES } from '../api/rules.ts'
import type { Logger } from '../common/logger.ts'
import { forEachLimited } from '../common/limit.ts'
import { lstatFile, type OpenFile } from './fd.ts'
import { contentTypeOf, kindOf, openFailure, statOpened, statOpenedSync, type ArtifactFile } from './files.ts'
import { checkPatterns } from './glob.ts'
import { NO_FOLLOW } from './platform.ts'
import { relativeSitePath, walkSite } from './walk.ts'

export interface CollectOptions {
  root: string
  /** Relative to root, `!` to exclude. */
  patterns: string[]
  includeHidden: boolean
  logger: Pick<Logger, 'warning' | 'debug'>
  sizeLimit?: { bytes: number; message: (total: number) => string }
  open?: OpenFile
  /** O_NOFOLLOW, or 0 as on Windows. */
  noFollow?: number
  signal?: AbortSignal
}

export interface ScannedSite {
  files: ArtifactFile[]
  /** Left out (include-hidden false), a folder's with a trailing `/`. */
  hidden: string[]
}

export async function scanArtifacts(options: CollectOptions): Promise<ArtifactFile[]> {
  return (await scanSite(options)).files
}

export async function scanSite(options: CollectOptions): Promise<ScannedSite> {
  const { files, hidden } = await findFiles(options)
  const total = files.reduce((sum, f) => sum + f.size, 0)
  if (options.sizeLimit && total >= options.sizeLimit.bytes)
    throw new UsageError(options.sizeLimit.message(total))
  return { files, hidden }
}

const FILES_A_TURN = 1024

async function findFiles(options: CollectOptions): Promise<ScannedSite> {
  const root = path.resolve(options.root)
  const realRoot = await checkRoot(root, options)
  const { found, others, hidden } = await walkSite({ ...options, root })
  const scan = scanOf(root, realRoot, others, options)
  const described = new Array<Described>(found.length)
  const describe = async (absolutePath: string, i: number) => {
    described[i] = await describeFile(absolutePath, scan)
  }
  // Synchronous calls one after the other, the event loop let run between batches so a cancel is heard.
  if (scan.local) {
    for (const [i, absolutePath] of found.entries()) {
      if (i % FILES_A_TURN === FILES_A_TURN - 1) {
        await yieldToEventLoop()
        options.signal?.throwIfAborted()
      }
      await describe(absolutePath, i)
    }
  } else await forEachLimited(found, 16, describe)
  return { files: collected(described, options), hidden }
}

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

function whereLooked(given: string, resolved: string): string {
  if (path.isAbsolute(given)) return 'there is no such folder'
  return `looked for ${resolved}, as it is relative to the working directory ${process.cwd()}`
}

interface Scan {
  root: string
  inside: (target: string) => boolean
  /** The found paths the listing did not say are regular files: each is lstat'ed first. */
  others: ReadonlySet<string>
  local: boolean
  logger: CollectOptions['logger']
  open: OpenFile | undefined
  noFollow: number
}

function scanOf(root: string, realRoot: string, others: ReadonlySet<string>, options: CollectOptions): Scan {
  // Locally a synchronous open, fstat and close costs less than a round trip through the thread pool.
  const local = options.open === undefined && isLocalFileSystem(realRoot)
  const inside = (target: string) => target === realRoot || target.startsWith(realRoot + path.sep)
  const noFollow = options.noFollow ?? NO_FOLLOW
  return { root, inside, others, local, logger: options.logger, open: options.open, noFollow }
}

/** Only regular files are collected (a FIFO would hang the read); one that cannot be opened is refused now. */
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

/** The file itself, or the file a link inside path leads to; a device is never opened. */
async function whereToRead(absolutePath: string, relative: string, scan: Scan): Promise<string | Refused> {
  if (!scan.others.has(absolutePath)) return absolutePath
  const stats = scan.local ? lstatSync(absolutePath) : await lstatFile(absolutePath)
  if (stats.isSymbolicLink()) return linkTarget(absolutePath, relative, scan)
  return stats.isFile() ? absolutePath : notRegular(relative, stats)
}

async function linkTarget(link: string, relative: string, scan: Scan): Promise<string | Refused> {
  const real = await realpath(link).catch(() => undefined)
  if (real === undefined) {
    scan.logger.warning(`Skipping ${relative}: it is a link to nothing`)
    return SKIPPED
  }
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

/** statfs(2) magic numbers: NFS, SMB, CIFS, SMB2, Coda, AFS, Ceph, FUSE, 9P, GFS2, OCFS2, Lustre. */
const REMOTE_FILE_SYSTEMS = new Set([
  0x6969, 0x517b, 0xff534d42, 0xfe534d42, 0x73757245, 0x5346414f, 0x00c36400, 0x65735546, 0x01021997,
  0x01161970, 0x7461636f, 0x0bd00bd0,
])

/** Only Linux's statfs names the file system; elsewhere it is taken as local. */
function isLocalFileSystem(root: string): boolean {
  if (process.platform !== 'linux') return true
  try {
    return !REMOTE_FILE_SYSTEMS.has(Number(statfsSync(root).type))
  } catch {
    return false
  }
}
