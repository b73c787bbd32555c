// The scan opens every file before anything is created: a file this process cannot read, one removed
// meanwhile, a full descriptor table, all fail the scan naming the files; and it records which file
// each one is (device and inode) for the hashing and the upload to read only that one.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, realpath, stat, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { UsageError } from '../../../src/api/errors.ts'
import { memoryLogger } from '../../../src/common/logger.ts'
import { openFile, type OpenFile } from '../../../src/deploy/collect/read.ts'
import { hashArtifacts } from '../../../src/deploy/collect/hash.ts'
import type { ScanOptions } from '../../../src/deploy/collect/scan.ts'
import { scanArtifacts, tempDir, writeTree } from '../../support/helpers.ts'
import { needsModeBits, needsSymlinks } from '../../support/platform.ts'

const files = (root: string, overrides: Partial<ScanOptions> = {}): ScanOptions => ({
  root,
  patterns: ['**'],
  includeHidden: false,
  logger: memoryLogger(),
  ...overrides,
})

/** An open that fails with `code` for the files named (by base name). */
function refusing(code: string, names: string[]): OpenFile {
  return (p, flags) => {
    if (!names.includes(path.basename(p))) return openFile(p, flags)
    throw Object.assign(new Error(`${code}: refused, open '${p}'`), { code, syscall: 'open', path: p })
  }
}

test(
  'the scan records the file it opened: its device and inode, and for a link inside path the file it leads to',
  { skip: needsSymlinks },
  async () => {
    const root = await tempDir()
    await writeTree(root, { 'a.txt': 'hello', 'data/b.bin': 'bytes' })
    await symlink(path.join(root, 'data/b.bin'), path.join(root, 'b-link.bin'))
    const scanned = await scanArtifacts(files(root))
    const byPath = new Map(scanned.map((f) => [f.path, f]))
    for (const name of ['a.txt', 'data/b.bin', 'b-link.bin']) {
      const file = byPath.get(name)!
      const real = await stat(path.join(root, name))
      assert.deepEqual([file.dev, file.ino, file.size], [real.dev, real.ino, real.size], name)
    }
    assert.equal(byPath.get('b-link.bin')!.absolutePath, await realpath(path.join(root, 'data/b.bin')))
    // The link is hashed as the file it leads to, read without following a link.
    const [linked, own] = await hashArtifacts([byPath.get('b-link.bin')!, byPath.get('data/b.bin')!])
    assert.equal(linked, own)
  },
)

test('files this process cannot open fail the scan, all of them named, whatever the reason', async () => {
  const root = await tempDir()
  await writeTree(root, {
    'index.html': '<html>',
    'game.js': 'run()',
    'assets/a.png': 'png',
    'assets/b.png': 'png',
  })
  const error = await scanArtifacts(files(root, { open: refusing('EACCES', ['game.js', 'b.png']) })).catch(
    (e: unknown) => e,
  )
  assert.ok(error instanceof UsageError, String(error))
  assert.equal(
    error.message,
    'path: every file of the site is opened before anything is created, and these 2 could not be: ' +
      'assets/b.png (EACCES: this process may not read it), game.js (EACCES: this process may not read it). ' +
      "Make them readable, or leave them out with files: '!<path>'",
  )
})

test('a file removed between the listing and the scan, and a full descriptor table, are named too', async () => {
  const root = await tempDir()
  await writeTree(root, { 'index.html': '<html>', 'game.js': 'run()' })
  await writeTree(root, { 'gone.js': 'x' })
  // Removed once it was listed: its open finds nothing.
  await assert.rejects(scanArtifacts(files(root, { open: refusing('ENOENT', ['gone.js']) })), {
    name: 'UsageError',
    message:
      'path: every file of the site is opened before anything is created, and this one could not be: ' +
      "gone.js (ENOENT: removed while the files were scanned). Make it readable, or leave it out with files: '!<path>'",
  })
  await assert.rejects(scanArtifacts(files(root, { open: refusing('EMFILE', ['game.js']) })), {
    message: /: game\.js \(EMFILE: out of file descriptors; raise the limit \(ulimit -n\)\)\./,
  })
})

/**
 * How to run a process that file permissions bind: as it is when this one is not root; as root,
 * without the capabilities that bypass them (setpriv, util-linux). Undefined when neither can be.
 */
function unprivileged(): string[] | undefined {
  if (process.getuid?.() !== 0) return []
  const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p))
  return setpriv ? [setpriv, '--bounding-set=-dac_override,-dac_read_search'] : undefined
}

test(
  'a file of mode 000 fails the scan of a process that may not read it (a real EACCES, no injected open)',
  {
    skip:
      needsModeBits ||
      (unprivileged() === undefined && 'root without setpriv: permissions cannot bind this test'),
  },
  async () => {
    const root = await tempDir()
    await writeTree(root, { 'index.html': '<html>', 'secret.key': 'key' })
    await chmod(path.join(root, 'secret.key'), 0o000)
    const script = path.join(await tempDir(), 'scan.ts')
    const src = (p: string) =>
      pathToFileURL(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../src', p)).href
    await writeFile(
      script,
      `import { scanSite } from '${src('deploy/collect/scan.ts')}'\n` +
        `import { memoryLogger } from '${src('common/logger.ts')}'\n` +
        `await scanSite({ root: ${JSON.stringify(root)}, patterns: ['**'], includeHidden: false, logger: memoryLogger() })\n` +
        `  .then(() => console.log('scanned'), (e) => console.log(e.message))\n`,
    )
    const [command = process.execPath, ...args] = [...unprivileged()!, process.execPath, script]
    const { stdout } = await promisify(execFile)(command, args)
    assert.equal(
      stdout.trim(),
      'path: every file of the site is opened before anything is created, and this one could not be: ' +
        "secret.key (EACCES: this process may not read it). Make it readable, or leave it out with files: '!<path>'",
    )
  },
)
