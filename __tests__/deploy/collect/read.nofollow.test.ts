// No link followed, and only the scanned file read: a link or another file put at a scanned file's
// path after the scan is refused, naming it, before a byte of it is handed on.
import assert from 'node:assert/strict'
import { rename, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { test } from 'node:test'
import { memoryLogger } from '../../../src/common/logger.ts'
import type { ArtifactFile } from '../../../src/deploy/collect/files.ts'
import { readScanned, streamScanned } from '../../../src/deploy/collect/read.ts'
import { scanArtifacts, tempDir, writeTree } from '../../support/helpers.ts'
import { needsSymlinks } from '../../support/platform.ts'

const scan = async (root: string) =>
  (await scanArtifacts({ root, patterns: ['**'], includeHidden: false, logger: memoryLogger() })).find(
    (f) => f.path === 'game.js',
  ) as ArtifactFile

async function read(file: ArtifactFile): Promise<Buffer[]> {
  const chunks: Buffer[] = []
  for await (const chunk of streamScanned(file)) chunks.push(chunk)
  return chunks
}

test(
  "a link put at a scanned file's path is not followed: both readers refuse it, naming it",
  { skip: needsSymlinks },
  async () => {
    const root = await tempDir()
    const outside = await tempDir()
    await writeTree(root, { 'game.js': 'run()', 'other.js': 'other()' })
    await writeTree(outside, { 'secret.txt': 'token' })
    const file = await scan(root)
    await rename(path.join(root, 'game.js'), path.join(root, 'game.js.moved'))
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'game.js'))
    const refused =
      /^game\.js can no longer be opened \(ELOOP: it became a link after it was scanned; the link is not followed\)$/
    assert.throws(() => readScanned(file), { message: refused })
    await assert.rejects(read(file), { message: refused })
  },
)

test("another file put at a scanned file's path is refused by its identity, before a byte of it is handed on", async () => {
  const root = await tempDir()
  await writeTree(root, { 'game.js': 'run()' })
  const file = await scan(root)
  await rename(path.join(root, 'game.js'), path.join(root, 'game.js.moved'))
  await writeFile(path.join(root, 'game.js'), 'x()()')
  const refused = /^game\.js was replaced after it was scanned: another file is at its path now/
  assert.throws(() => readScanned(file), { message: refused })
  let handedOn = 0
  await assert.rejects(
    (async () => {
      for await (const chunk of streamScanned(file)) handedOn += chunk.length
    })(),
    { message: refused },
  )
  assert.equal(handedOn, 0)
})
