// The "no link followed" guarantee where the system has no O_NOFOLLOW (Windows): run here on Linux
// with the flag absent (noFollow 0), the scan and the upload's open still refuse a link swapped in
// for a scanned file, naming it: an lstat before the open, and the opened file's device and inode
// compared with what was seen.
import assert from 'node:assert/strict'
import { rename, symlink } from 'node:fs/promises'
import path from 'node:path'
import { test } from 'node:test'
import { UsageError } from '../../src/api/errors.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { closeFile, openFile, type OpenFile } from '../../src/deploy/fd.ts'
import {
  assertScannedFile,
  openAtScannedPath,
  openScanned,
  type ArtifactFile,
} from '../../src/deploy/files.ts'
import { scanArtifacts, type CollectOptions } from '../../src/deploy/scan.ts'
import { fstatSync } from 'node:fs'
import { tempDir, writeTree } from '../support/helpers.ts'
import { needsSymlinks } from '../support/platform.ts'

const WITHOUT_O_NOFOLLOW = 0
const skip = needsSymlinks

const files = (root: string, overrides: Partial<CollectOptions> = {}): CollectOptions => ({
  root,
  patterns: ['**'],
  includeHidden: false,
  logger: memoryLogger(),
  noFollow: WITHOUT_O_NOFOLLOW,
  ...overrides,
})

/** Moves `name` away and puts a link to `target` at its path, as an attacker would between two calls. */
async function swapInLink(root: string, name: string, target: string): Promise<void> {
  await rename(path.join(root, name), path.join(root, `${name}.moved`))
  await symlink(target, path.join(root, name))
}

/** fs.open, after swapping a link in for `name` the first time it is opened (after the lstat). */
function swappingOnOpen(root: string, name: string, target: string): OpenFile {
  let swapped = false
  return async (p, flags) => {
    if (!swapped && path.basename(p) === name) {
      swapped = true
      await swapInLink(root, name, target)
    }
    return openFile(p, flags)
  }
}

test(
  'without O_NOFOLLOW the scan refuses a link swapped in between its lstat and its open, naming it',
  { skip },
  async () => {
    const root = await tempDir()
    const outside = await tempDir()
    await writeTree(root, { 'index.html': '<html>', 'game.js': 'run()' })
    await writeTree(outside, { 'secret.txt': 'token' })
    const error = await scanArtifacts(
      files(root, { open: swappingOnOpen(root, 'game.js', path.join(outside, 'secret.txt')) }),
    ).catch((e: unknown) => e)
    assert.ok(error instanceof UsageError, String(error))
    assert.match(error.message, /game\.js \(ELOOP: it became a link while the files were scanned\)/)
    assert.doesNotMatch(error.message, /index\.html/)
  },
)

test(
  'without O_NOFOLLOW the scan still collects plain files and records the file it opened',
  { skip },
  async () => {
    const root = await tempDir()
    await writeTree(root, { 'index.html': '<html>', 'data/b.bin': 'bytes' })
    const scanned = await scanArtifacts(files(root))
    assert.deepEqual(scanned.map((f) => f.path).sort(), ['data/b.bin', 'index.html'])
  },
)

test(
  "without O_NOFOLLOW the upload refuses a link put at a scanned file's path, naming it",
  { skip },
  async () => {
    const root = await tempDir()
    const outside = await tempDir()
    await writeTree(root, { 'game.js': 'run()', 'other.js': 'other()' })
    await writeTree(outside, { 'secret.txt': 'token' })
    const [file] = (await scanArtifacts(files(root))).filter((f) => f.path === 'game.js') as [ArtifactFile]
    await swapInLink(root, 'game.js', path.join(outside, 'secret.txt'))
    await assert.rejects(openScanned(file, undefined, WITHOUT_O_NOFOLLOW), {
      message: /^game\.js was replaced by a link after it was scanned; the link is not followed \(ELOOP/,
    })
    await assert.rejects(openAtScannedPath(file, undefined, WITHOUT_O_NOFOLLOW), {
      message: /^game\.js was replaced by a link after it was scanned/,
    })
  },
)

test(
  "without O_NOFOLLOW a link swapped in after the upload's lstat is followed, and its file refused by its identity",
  { skip },
  async () => {
    const root = await tempDir()
    const outside = await tempDir()
    await writeTree(root, { 'game.js': 'run()' })
    await writeTree(outside, { 'secret.txt': 'token' })
    const [file] = (await scanArtifacts(files(root))) as [ArtifactFile]
    const open = swappingOnOpen(root, 'game.js', path.join(outside, 'secret.txt'))
    await assert.rejects(openScanned(file, open, WITHOUT_O_NOFOLLOW), {
      message: /^game\.js was replaced after it was scanned: another file is at its path now/,
    })
    // The reader that checks after its read (the upload's chunks): the same refusal, from the fstat.
    const again = await tempDir()
    await writeTree(again, { 'game.js': 'run()' })
    const [scanned] = (await scanArtifacts(files(again))) as [ArtifactFile]
    const fd = await openAtScannedPath(
      scanned,
      swappingOnOpen(again, 'game.js', path.join(outside, 'secret.txt')),
      WITHOUT_O_NOFOLLOW,
    )
    try {
      assert.throws(() => assertScannedFile(scanned, fstatSync(fd)), {
        message: /^game\.js was replaced after it was scanned: another file is at its path now/,
      })
    } finally {
      await closeFile(fd)
    }
  },
)
