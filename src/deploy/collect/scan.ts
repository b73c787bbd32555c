// The scan of a site's folder: each file the walk found opened and recorded with the file it is, and
// every refusal said before anything is created.

import { lstat, realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import { OBJECT_KEY_MAX_BYTES, SITE_PATH_MAX_BYTES } from '../../api/rules.ts'
import type { Logger } from '../../common/logger.ts'
import type { UsageError } from '../../api/errors.ts'
import { inputAssignment } from '../../common/input-naming.ts'
import { namedInputs, usage } from '../../inputs/common.ts'
import { Input } from '../../inputs/constants.ts'
import { contentTypeOf, type ArtifactFile } from './files.ts'
import { checkPatterns } from './glob.ts'
import { kindOf, openFailure, statOpened, type OpenFile } from './read.ts'
import { relativeSitePath, walkSite, type Walked, type WalkOptions } from './walk.ts'
import { listSome } from '../../common/format.ts'

export interface ScanOptions extends WalkOptions {
  logger: Pick<Logger, 'warning' | 'debug'>
  open?: OpenFile
}

/** Files scanned between two turns of the event loop, for a cancel to be heard. */
const SCANS_A_TURN = 512

/** `hidden`: left out (include-hidden false), a folder's with a trailing `/`. */
export async function scanSite(options: ScanOptions): Promise<{ files: ArtifactFile[]; hidden: string[] }> {
  const root = path.resolve(options.root)
  const realRoot = await checkRoot(root, options)
  const { found, others, hidden } = await walkSite({ ...options, root })
  const refused: Record<Refusal, string[]> = { 'too-long': [], 'not-regular': [], unopenable: [] }
  const scan: Scan = { root, realRoot, others, options, refused }
  const files: ArtifactFile[] = []
  for (const [i, absolutePath] of found.entries()) {
    if (i % SCANS_A_TURN === SCANS_A_TURN - 1) await yieldToEventLoop()
    options.signal?.throwIfAborted()
    const file = await describeFile(absolutePath, scan)
    if (file) files.push(file)
  }
  refuse(refused, files, options)
  return { files, hidden }
}

async function checkRoot(root: string, { root: given, includeHidden, patterns, logger }: ScanOptions) {
  const rootStat = await stat(root).catch(() => undefined)
  if (!rootStat) {
    const where = path.isAbsolute(given)
      ? 'there is no such folder'
      : `looked for ${root}, as it is relative to the working directory ${process.cwd()}`
    throw usage`{path}: '${given}' does not exist: ${where}`
  }
  if (!rootStat.isDirectory()) throw usage`{path}: '${given}' is a file; give the folder of the site`
  checkPatterns(patterns)
  const realRoot = await realpath(root)
  if (realRoot === path.parse(realRoot).root)
    throw usage`{path}: '${given}' is the root of the file system; give the folder of the built site (say 'dist')`
  const gitEntry = await lstat(path.join(root, '.git')).catch(() => undefined)
  if (!gitEntry) return realRoot
  if (includeHidden)
    throw usage`{path}: '${given}' is the root of a git repository, and {include-hidden} would upload its .git (the whole history): give the folder of the built site (say dist), or set ${inputAssignment(Input.IncludeHidden, 'false')}`
  logger.warning(
    usage`{path}: '${given}' is the root of a git repository (it holds .git): every file of the repository is deployed, .git and other hidden files left out. Give the folder of the built site (say dist) if that is not meant.`
      .message,
  )
  return realRoot
}

interface Scan extends Pick<Walked, 'others'> {
  root: string
  realRoot: string
  options: ScanOptions
  /** Each refusal's entries, `path (why)`: all are said before anything is created. */
  refused: Record<Refusal, string[]>
}

/** Only regular files are collected (a FIFO would hang the read); one that cannot be opened is refused now. */
type Refusal = 'too-long' | 'not-regular' | 'unopenable'

function refused(scan: Scan, kind: Refusal, relative: string, why: string): undefined {
  scan.refused[kind].push(`${relative} (${why})`)
}

async function describeFile(absolutePath: string, scan: Scan): Promise<ArtifactFile | undefined> {
  const relative = relativeSitePath(scan.root, absolutePath)
  const bytes = Buffer.byteLength(relative)
  if (bytes > SITE_PATH_MAX_BYTES) return refused(scan, 'too-long', relative, `${bytes} bytes`)
  try {
    const readPath = await whereToRead(absolutePath, relative, scan)
    if (readPath === undefined) return undefined
    const opened = statOpened(readPath, scan.options.open)
    if (!opened.isFile()) return refused(scan, 'not-regular', relative, kindOf(opened))
    const { size, mtimeMs, dev, ino } = opened
    const file: ArtifactFile = { path: relative, absolutePath: readPath, size, mtimeMs, dev, ino }
    const contentType = contentTypeOf(relative)
    if (contentType) file.contentType = contentType
    return file
  } catch (error) {
    return refused(scan, 'unopenable', relative, openFailure(error))
  }
}

/** The file itself, or the file a link inside path leads to; a device is never opened. */
async function whereToRead(absolutePath: string, relative: string, scan: Scan): Promise<string | undefined> {
  if (!scan.others.has(absolutePath)) return absolutePath
  const stats = await lstat(absolutePath)
  if (stats.isSymbolicLink()) return linkTarget(absolutePath, relative, scan)
  return stats.isFile() ? absolutePath : refused(scan, 'not-regular', relative, kindOf(stats))
}

async function linkTarget(link: string, relative: string, scan: Scan): Promise<string | undefined> {
  const { realRoot, options } = scan
  const real = await realpath(link).catch(() => undefined)
  const skip = (why: string): undefined => {
    options.logger.warning(`Skipping ${relative}: it is a link ${why}`)
  }
  if (real === undefined) return skip('to nothing')
  if (real !== realRoot && !real.startsWith(realRoot + path.sep)) return skip('that leads outside path')
  const target = await stat(real)
  if (target.isDirectory()) return skip('to a folder inside path, whose files are collected where they are')
  return target.isFile() ? real : refused(scan, 'not-regular', relative, kindOf(target))
}

/** The first refusal found in this order is said. */
const REFUSALS: Record<Refusal, (count: number, them: string, list: string) => UsageError> = {
  'too-long': (count, them, list) =>
    usage`{path}: the store keeps each file at the key <upload id>/<path>, at most ${OBJECT_KEY_MAX_BYTES} bytes, so a path may have ${SITE_PATH_MAX_BYTES} bytes of UTF-8; ${count === 1 ? 'this one has' : `these ${count} have`} more: ${list}. Shorten ${them} (a folder's name), or leave ${them} out with ${inputAssignment(Input.Files, "'!<path>'")}`,
  'not-regular': (count, them, list) =>
    usage`{path}: a site holds only regular files; ${count === 1 ? 'this is not one' : 'these are not'}: ${list}. Remove ${them}, or leave ${them} out with ${inputAssignment(Input.Files, "'!<path>'")}`,
  unopenable: (count, them, list) =>
    usage`{path}: every file of the site is opened before anything is created, and ${count === 1 ? 'this one' : `these ${count}`} could not be: ${list}. Make ${them} readable, or leave ${them} out with ${inputAssignment(Input.Files, "'!<path>'")}`,
}

function refuse(refused: Scan['refused'], files: readonly ArtifactFile[], options: ScanOptions) {
  for (const [kind, refusal] of Object.entries(REFUSALS)) {
    const list = refused[kind as Refusal].sort()
    if (list.length) throw refusal(list.length, list.length === 1 ? 'it' : 'them', listSome(list, 10))
  }
  if (files.length === 0) {
    const patterns = options.patterns.map((p) => `'${p}'`).join(', ')
    const hidden = options.includeHidden
      ? ''
      : namedInputs(' (hidden files are skipped unless {include-hidden} is true)')
    throw usage`{files}: no file under '${options.root}' matches ${patterns}${hidden}`
  }
}
