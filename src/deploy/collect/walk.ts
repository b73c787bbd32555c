// The one walk of a site's folder, for the action and the CLI: links not followed, the event loop let
// run between batches so a cancel is heard whatever the tree.

import { inputAssignment, inputName } from '../../common/input-naming.ts'
import { listSome, plural } from '../../common/format.ts'
import type { Dirent } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import path from 'node:path'
import { isUtf8 } from 'node:buffer'
import { UsageError } from '../../api/errors.ts'
import { Input } from '../../inputs/constants.ts'
import { fileSelector } from './glob.ts'

export interface WalkOptions {
  root: string
  /** Relative to root, `!` to exclude. */
  patterns: readonly string[]
  includeHidden: boolean
  signal?: AbortSignal
}

export interface Walked {
  /** Absolute paths, in the order listed. */
  found: string[]
  /** Those the listing did not say are regular files (links, devices, FIFOs...): lstat them. */
  others: Set<string>
  /** Relative to the root, a folder's with a trailing `/`, sorted. */
  hidden: string[]
}

const LISTING_AHEAD = 16
const ENTRIES_A_TURN = 1024

/** What bytes that are not UTF-8 are decoded to: such a path cannot be opened again. */
const REPLACEMENT = '\uFFFD'

export async function walkSite({ root, patterns, includeHidden, signal }: WalkOptions): Promise<Walked> {
  const selected = fileSelector(patterns)
  const walked: Walked = { found: [], others: new Set(), hidden: [] }
  let handled = 0
  let level = [root]
  while (level.length) {
    const next: string[] = []
    // A few listings ahead, taken in order: the file system's order, few listings held at once.
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
        if (!includeHidden && entry.name.startsWith('.')) {
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

/** A listing left unread (the walk failed) fails without an unhandled rejection. */
function listFolder(dir: string): Promise<Dirent[]> {
  const listing = readdir(dir, { withFileTypes: true })
  listing.catch(() => {})
  return listing
}

/** With `/` separators whatever the platform's (`pathApi`: path.win32 in a test). */
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

/** The service knows files by UTF-8 paths; a name with a real U+FFFD passes. */
async function refuseUndecodable(root: string, folder: string): Promise<void> {
  const prefix = folder === root ? '' : `${relativeSitePath(root, folder)}/`
  const names = (await readdir(folder, { encoding: 'buffer' }))
    .filter((name) => !isUtf8(name))
    .map((name) => prefix + escapeBytes(name))
    .sort()
  if (!names.length) return
  const one = names.length === 1
  throw new UsageError(
    `${inputName(Input.Path)}: the service knows each file by its path in UTF-8, and ${one ? 'this name is' : `these ${names.length} names are`} ` +
      `not UTF-8 (shown by their bytes): ${listSome(names, 10)}. ` +
      `Rename ${one ? 'it' : 'them'} in UTF-8 (a build tool on another system may have written Latin-1)`,
  )
}

const escapeBytes = (name: Buffer) =>
  Array.from(name, (byte) =>
    byte >= 0x20 && byte < 0x7f && byte !== 0x5c
      ? String.fromCharCode(byte)
      : `\\x${byte.toString(16).padStart(2, '0')}`,
  ).join('')

export function hiddenLeftOut(hidden: readonly string[]): string | undefined {
  if (!hidden.length) return undefined
  const folders = hidden.filter((name) => name.endsWith('/')).length
  const what = [
    ...(hidden.length > folders ? [plural(hidden.length - folders, 'hidden file')] : []),
    ...(folders ? [plural(folders, 'hidden folder')] : []),
  ].join(' and ')
  return `${what} left out (${inputAssignment(Input.IncludeHidden, 'true')} to upload them): ${listSome(hidden, 5)}`
}
