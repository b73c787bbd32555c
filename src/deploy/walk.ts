// The one walk of a site's folder, for the action and the CLI: every folder listed once (links not
// followed, hidden ones not entered unless asked), each entry's name checked and matched against the
// `files` patterns (glob.ts). It listens to the run's signal and lets the event loop run between
// batches, so a cancel is heard whatever the tree.

import { inputAssignment } from '../common/input-naming.ts'
import type { Dirent } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import path from 'node:path'
import { isUtf8 } from 'node:buffer'
import { UsageError } from '../api/errors.ts'
import { Input } from '../inputs/constants.ts'
import { fileSelector } from './glob.ts'

export interface Walk {
  root: string
  patterns: readonly string[]
  includeHidden: boolean
  signal?: AbortSignal
}

export interface Walked {
  /** The entries the patterns select, but folders, as absolute paths, in the order listed. */
  found: string[]
  /** Those of found the listing did not say are regular files (links, devices, FIFOs...): lstat them. */
  others: Set<string>
  /**
   * The hidden files and folders left out, relative to the root, a folder's with a trailing `/` (its
   * content is not walked), sorted: none when include-hidden is true.
   */
  hidden: string[]
}

/** Folders listed ahead of the one being read, and entries handled between two turns of the event loop. */
const LISTING_AHEAD = 16
const ENTRIES_A_TURN = 1024

/** What a name's bytes that are not UTF-8 are decoded to: such a path cannot be opened again. */
const REPLACEMENT = '\uFFFD'

export const isHidden = (name: string) => name.startsWith('.')

/** Lists the files under `root` that `patterns` select (see fileSelector), level by level. */
export async function walkSite({ root, patterns, includeHidden, signal }: Walk): Promise<Walked> {
  const selected = fileSelector(patterns)
  const walked: Walked = { found: [], others: new Set(), hidden: [] }
  let handled = 0
  let level = [root]
  while (level.length) {
    const next: string[] = []
    // Listed LISTING_AHEAD folders ahead and taken in order, so that the order is the file system's and
    // only the listings of those few are held at once.
    const ahead = level.slice(0, LISTING_AHEAD).map(listFolder)
    for (let i = 0; i < level.length; i++) {
      const dir = level[i]!
      const entries = await ahead[i % LISTING_AHEAD]!
      if (i + LISTING_AHEAD < level.length) ahead[i % LISTING_AHEAD] = listFolder(level[i + LISTING_AHEAD]!)
      for (const entry of entries) {
        if (++handled % ENTRIES_A_TURN === 0) await yieldToEventLoop()
        signal?.throwIfAborted()
        if (entry.name.includes(REPLACEMENT)) await refuseUndecodable(root, dir)
        const entryPath = `${dir}${path.sep}${entry.name}`
        if (!includeHidden && isHidden(entry.name)) {
          walked.hidden.push(relativeSitePath(root, entryPath) + (entry.isDirectory() ? '/' : ''))
        } else if (entry.isDirectory()) next.push(entryPath)
        else if (selected(relativeSitePath(root, entryPath))) {
          walked.found.push(entryPath)
          if (!entry.isFile()) walked.others.add(entryPath)
        }
      }
    }
    level = next
  }
  walked.hidden.sort()
  return walked
}

/** A folder's entries; a listing left unread (the walk failed) fails without an unhandled rejection. */
function listFolder(dir: string): Promise<Dirent[]> {
  const listing = readdir(dir, { withFileTypes: true })
  listing.catch(() => {})
  return listing
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

/**
 * Refuses the site when `folder` holds a name that is not UTF-8, naming each by its bytes (escaped):
 * the service knows files by UTF-8 paths, and Node reads such a name with replacement characters, a
 * path that no longer leads to the file. A name with a real U+FFFD passes.
 */
async function refuseUndecodable(root: string, folder: string): Promise<void> {
  const prefix = folder === root ? '' : `${relativeSitePath(root, folder)}/`
  const names: string[] = []
  for (const name of await readdir(folder, { encoding: 'buffer' })) {
    if (!isUtf8(name)) names.push(prefix + escapeBytes(name))
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
  return `${what} left out (${inputAssignment(Input.IncludeHidden, 'true')} to upload them): ${shown}${more}`
}
