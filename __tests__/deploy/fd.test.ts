import assert from 'node:assert/strict'
import { fstatSync } from 'node:fs'
import { symlink } from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { closeFile, lstatFile, openFile, readAt } from '../../src/deploy/fd.ts'
import { readFlags } from '../../src/deploy/platform.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { needsSymlinks } from '../support/platform.ts'

describe('file descriptors', () => {
  it('stat, open, read and close a file and reject a missing one', { skip: needsSymlinks }, async () => {
    const root = await tempDir()
    await writeTree(root, { 'a.txt': 'hello world' })
    const file = path.join(root, 'a.txt')
    const readWhole = async () => {
      const fd = await openFile(file, readFlags())
      try {
        const buffer = Buffer.alloc(11)
        assert.equal(await readAt(fd, buffer, 0, 11, 0), 11)
        assert.equal(fstatSync(fd).size, 11)
        return buffer.toString()
      } finally {
        await closeFile(fd)
      }
    }
    const missing = path.join(root, 'missing.txt')
    await symlink(file, path.join(root, 'link'))
    assert.equal(await readWhole(), 'hello world')
    assert.equal((await lstatFile(file)).size, 11)
    assert.equal((await lstatFile(path.join(root, 'link'))).isSymbolicLink(), true)
    await assert.rejects(lstatFile(missing), { code: 'ENOENT' })
    await assert.rejects(openFile(missing, readFlags()), { code: 'ENOENT' })
    await assert.rejects(closeFile(2 ** 30), { code: 'EBADF' })
  })
})
