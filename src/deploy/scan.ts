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
import { listSome, relativeSitePath, walkSite } from './walk.ts'

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

export async function scanArtifacts(options: CollectOptions): Promise<ArtifactFile[]> {
  return (await scanSite(options)).files
}

const FILES_A_TURN = 1024

/** `hidden`: left out (include-hidden false), a folder's with a trailing `/`. */
export async function scanSite(
  options: CollectOptions,
): Promise<{ files: ArtifactFile[]; hidden: string[] }> {
  const root = path.resolve(options.root)
  const realRoot = await checkRoot(root, options)
  const { found, others, hidden } = await walkSite({ ...options, root })
  // Locally a synchronous open, fstat and close costs less than a round trip through the thread pool:
  // one file at a time there, the event loop let run between batches so a cancel is heard.
  const local = options.open === undefined && isLocalFileSystem(realRoot)
  const scan: Scan = { root, realRoot, others, local, options, noFollow: options.noFollow ?? NO_FOLLOW }
  const described = new Array<Described>(found.length)
  await forEachLimited(found, local ? 1 : 16, async (absolutePath, i) => {
    if (i % FILES_A_TURN === FILES_A_TURN - 1) {
      await yieldToEventLoop()
      options.signal?.throwIfAborted()
    }
    described[i] = await describeFile(absolutePath, scan)
  })
  const files = collected(described, options)
  const total = files.reduce((sum, f) => sum + f.size, 0)
  if (options.sizeLimit && total >= options.sizeLimit.bytes)
    throw new UsageError(options.sizeLimit.message(total))
  return { files, hidden }
}

async function checkRoot(root: string, { root: given, includeHidden, patterns, logger }: CollectOptions) {
  const rootStat = await stat(root).catch(() => undefined)
  if (!rootStat) {
    const where = path.isAbsolute(given)
      ? 'there is no such folder'
      : `looked for ${root}, as it is relative to the working directory ${process.cwd()}`
    throw new UsageError(`path: '${given}' does not exist: ${where}`)
  }
  if (!rootStat.isDirectory()) throw new UsageError(`path: '${given}' is a file; give the folder of the site`)
  checkPatterns(patterns)
  const realRoot = await realpath(root)
  if (realRoot === path.parse(realRoot).root) {
    throw new UsageError(
      `path: '${given}' is the root of the file system; give the folder of the built site (say 'dist')`,
    )
  }
  const gitEntry = await lstat(path.join(root, '.git')).catch(() => undefined)
  if (!gitEntry) return realRoot
  if (includeHidden) {
    throw new UsageError(
      `path: '${given}' is the root of a git repository, and include-hidden would upload its .git ` +
        '(the whole history): give the folder of the built site (say dist), or set include-hidden: false',
    )
  }
  logger.warning(
    `path: '${given}' is the root of a git repository (it holds .git): every file of the repository ` +
      'is deployed, .git and other hidden files left out. Give the folder of the built site (say dist) if that is not meant.',
  )
  return realRoot
}

interface Scan {
  root: string
  realRoot: string
  /** The found paths the listing did not say are regular files: each is lstat'ed first. */
  others: ReadonlySet<string>
  local: boolean
  options: CollectOptions
  noFollow: number
}

/** Only regular files are collected (a FIFO would hang the read); one that cannot be opened is refused now. */
type Described = ArtifactFile | Refused
type Refusal = 'too-long' | 'not-regular' | 'unopenable'
type Refused = { kind: 'skipped' } | { kind: Refusal; entry: string }

const SKIPPED: Refused = { kind: 'skipped' }
const notRegular = (relative: string, stats: Stats): Refused => ({
  kind: 'not-regular',
  entry: `${relative} (${kindOf(stats)})`,
})

async function describeFile(absolutePath: string, scan: Scan): Promise<Described> {
  const relative = relativeSitePath(scan.root, absolutePath)
  const bytes = Buffer.byteLength(relative)
  if (bytes > SITE_PATH_MAX_BYTES) return { kind: 'too-long', entry: `${relative} (${bytes} bytes)` }
  const { local, noFollow, options } = scan
  try {
    const readPath = await whereToRead(absolutePath, relative, scan)
    if (typeof readPath !== 'string') return readPath
    const opened =
      local && noFollow !== 0
        ? statOpenedSync(readPath, noFollow)
        : await statOpened(readPath, options.open, noFollow)
    if (!opened.isFile()) return notRegular(relative, opened)
    const contentType = contentTypeOf(relative)
    const { size, mtimeMs, dev, ino } = opened
    return {
      path: relative,
      absolutePath: readPath,
      size,
      mtimeMs,
      dev,
      ino,
      ...(contentType ? { contentType } : {}),
    }
  } catch (error) {
    return { kind: 'unopenable', entry: `${relative} (${openFailure(error)})` }
  }
}

/** The file itself, or the file a link inside path leads to; a device is never opened. */
async function whereToRead(absolutePath: string, relative: string, scan: Scan): Promise<string | Refused> {
  if (!scan.others.has(absolutePath)) return absolutePath
  const stats = scan.local ? lstatSync(absolutePath) : await lstatFile(absolutePath)
  if (stats.isSymbolicLink()) return linkTarget(absolutePath, relative, scan)
  return stats.isFile() ? absolutePath : notRegular(relative, stats)
}

async function linkTarget(
  link: string,
  relative: string,
  { realRoot, options }: Scan,
): Promise<string | Refused> {
  const real = await realpath(link).catch(() => undefined)
  const skip = (why: string) => {
    options.logger.warning(`Skipping ${relative}: it is a link ${why}`)
    return SKIPPED
  }
  if (real === undefined) return skip('to nothing')
  if (real !== realRoot && !real.startsWith(realRoot + path.sep)) return skip('that leads outside path')
  const target = await stat(real)
  if (target.isDirectory()) return skip('to a folder inside path, whose files are collected where they are')
  return target.isFile() ? real : notRegular(relative, target)
}

/** The first refusal found in this order is said. */
const REFUSALS: Record<Refusal, (count: number, them: string, list: string) => string> = {
  'too-long': (count, them, list) =>
    `path: the store keeps each file at the key <upload id>/<path>, at most ${OBJECT_KEY_MAX_BYTES} bytes, so a ` +
    `path may have ${SITE_PATH_MAX_BYTES} bytes of UTF-8; ${count === 1 ? 'this one has' : `these ${count} have`} more: ` +
    `${list}. Shorten ${them} (a folder's name), or leave ${them} out with files: '!<path>'`,
  'not-regular': (count, them, list) =>
    `path: a site holds only regular files; ${count === 1 ? 'this is not one' : 'these are not'}: ` +
    `${list}. Remove ${them}, or leave ${them} out with files: '!<path>'`,
  unopenable: (count, them, list) =>
    `path: every file of the site is opened before anything is created, and ` +
    `${count === 1 ? 'this one' : `these ${count}`} could not be: ${list}. ` +
    `Make ${them} readable, or leave ${them} out with files: '!<path>'`,
}

function collected(described: readonly Described[], options: CollectOptions): ArtifactFile[] {
  const files: ArtifactFile[] = []
  const refused: Record<Refusal, string[]> = { 'too-long': [], 'not-regular': [], unopenable: [] }
  for (const d of described) {
    if (!('kind' in d)) files.push(d)
    else if (d.kind !== 'skipped') refused[d.kind].push(d.entry)
  }
  for (const [kind, message] of Object.entries(REFUSALS)) {
    const list = refused[kind as Refusal].sort()
    if (list.length)
      throw new UsageError(message(list.length, list.length === 1 ? 'it' : 'them', listSome(list, 10)))
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
