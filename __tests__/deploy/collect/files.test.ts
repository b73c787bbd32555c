import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { appendFile, mkdir, readdir, readFile, symlink, truncate } from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { test } from 'node:test'
import * as actionsGlobModule from '@actions/glob'
import { hiddenLeftOut } from '../../../src/deploy/collect/walk.ts'
import { UsageError } from '../../../src/api/errors.ts'
import {
  buildManifest,
  contentTypeOf,
  fileDescriptors,
  writeManifest,
} from '../../../src/deploy/collect/files.ts'
import { hashArtifacts } from '../../../src/deploy/collect/hash.ts'
import { scanSite } from '../../../src/deploy/collect/scan.ts'
import { memoryLogger } from '../../../src/common/logger.ts'
import { collectArtifacts, scanArtifacts, tempDir, writeTree } from '../../support/helpers.ts'
import { needsFifo, needsSymlinks } from '../../support/platform.ts'

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex')

test('collects, hashes and types every file, with / separated relative paths', async () => {
  const root = await tempDir()
  const written = await writeTree(root, {
    'index.html': '<h1>hi</h1>',
    'js/game.js': 'x',
    'game.wasm': 2 * 1024 * 1024 + 3,
    'data/level.bin.unknownext': 10,
  })
  const manifest = await collectArtifacts({
    root,
    patterns: ['**'],
    includeHidden: false,
    logger: memoryLogger(),
  })
  assert.deepEqual(
    manifest.files.map((f) => f.path),
    ['data/level.bin.unknownext', 'game.wasm', 'index.html', 'js/game.js'],
  )
  for (const file of manifest.files) {
    const bytes = written.get(file.path)!
    assert.equal(file.size, bytes.length)
    assert.equal(file.sha256, sha256(bytes))
  }
  const types = Object.fromEntries(manifest.files.map((f) => [f.path, f.contentType]))
  assert.equal(types['index.html'], 'text/html; charset=utf-8')
  assert.equal(types['js/game.js'], 'text/javascript; charset=utf-8')
  assert.equal(types['game.wasm'], 'application/wasm')
  assert.equal(types['data/level.bin.unknownext'], undefined)
  assert.equal(
    manifest.totalBytes,
    [...written.values()].reduce((s, b) => s + b.length, 0),
  )
  assert.deepEqual(fileDescriptors(manifest.files)[0], {
    path: 'data/level.bin.unknownext',
    content_length: 10,
  })
})

test('the digest covers path, size and hash, in path order whatever the input order', () => {
  const a = { path: 'a', absolutePath: '/a', size: 1, mtimeMs: 0, dev: 1, ino: 1 }
  const b = { path: 'b', absolutePath: '/b', size: 2, mtimeMs: 0, dev: 1, ino: 2 }
  const digest = buildManifest([a, b], ['00', '11']).digest
  assert.match(digest, /^sha256:[0-9a-f]{64}$/)
  assert.equal(buildManifest([b, a], ['11', '00']).digest, digest)
  assert.notEqual(buildManifest([a, { ...b, size: 3 }], ['00', '11']).digest, digest)
  assert.notEqual(buildManifest([a, { ...b, path: 'c' }], ['00', '11']).digest, digest)
  assert.notEqual(buildManifest([a, b], ['00', '12']).digest, digest)
  const expected = createHash('sha256').update('["a",1,"00"]\n["b",2,"11"]\n').digest('hex')
  assert.equal(digest, `sha256:${expected}`)
})

test('patterns select and exclude, relative to path', async () => {
  const root = await tempDir()
  await writeTree(root, { 'a.html': 'a', 'b.js': 'b', 'maps/x.map': 'm', 'sub/c.html': 'c' })
  const manifest = await collectArtifacts({
    root,
    patterns: ['**/*.html', '**/*.js', '!sub/**'],
    includeHidden: false,
    logger: memoryLogger(),
  })
  assert.deepEqual(
    manifest.files.map((f) => f.path),
    ['a.html', 'b.js'],
  )
})

test('hidden files and folders are skipped unless include-hidden', async () => {
  const root = await tempDir()
  await writeTree(root, { 'index.html': 'i', '.env': 'SECRET=1', '.config/settings': 'c', 'a/.hidden': 'h' })
  const skip = await collectArtifacts({
    root,
    patterns: ['**'],
    includeHidden: false,
    logger: memoryLogger(),
  })
  assert.deepEqual(
    skip.files.map((f) => f.path),
    ['index.html'],
  )
  // Patterns other than ** go through @actions/glob, and skip the same files.
  const skipGlob = await scanArtifacts({
    root,
    patterns: ['**/*'],
    includeHidden: false,
    logger: memoryLogger(),
  })
  assert.deepEqual(
    skipGlob.map((f) => f.path),
    ['index.html'],
  )
  const keep = await collectArtifacts({
    root,
    patterns: ['**'],
    includeHidden: true,
    logger: memoryLogger(),
  })
  assert.deepEqual(
    keep.files.map((f) => f.path),
    ['.config/settings', '.env', 'a/.hidden', 'index.html'],
  )
})

test('the hidden files and folders left out are counted and named, whatever the patterns; none with include-hidden', async () => {
  const root = await tempDir()
  await writeTree(root, {
    'index.html': 'i',
    '.env': 'SECRET=1',
    '.cache/HEAD': 'ref',
    '.cache/objects/a': 'x',
    'a/.DS_Store': 'h',
    'a/b.js': 'b',
  })
  const scan = (patterns: string[], includeHidden = false) =>
    scanSite({ root, patterns, includeHidden, logger: memoryLogger() })
  // ** lists the plain tree itself; other patterns go through the globber: the same account.
  for (const patterns of [['**'], ['**/*.html', 'a/**']]) {
    const { files, hidden } = await scan(patterns)
    assert.deepEqual(files.map((f) => f.path).sort(), ['a/b.js', 'index.html'])
    assert.deepEqual(hidden, ['.cache/', '.env', 'a/.DS_Store'], patterns.join(' '))
    assert.equal(
      hiddenLeftOut(hidden),
      '2 hidden files and 1 hidden folder left out (include-hidden: true to upload them): .cache/, .env, a/.DS_Store',
    )
  }
  assert.deepEqual((await scan(['**'], true)).hidden, [])
  assert.equal(hiddenLeftOut([]), undefined)
  assert.equal(hiddenLeftOut(['.env']), '1 hidden file left out (include-hidden: true to upload them): .env')
})

test('a name that is not UTF-8 is refused before anything is created, named by its bytes', async () => {
  const root = await tempDir()
  await writeTree(root, { 'index.html': 'i', 'build/ok.png': 'p', 'caf\uFFFD.txt': 'a real U+FFFD passes' })
  writeFileSync(
    Buffer.concat([Buffer.from(`${root}/build/caf`), Buffer.from([0xe9]), Buffer.from('.png')]),
    'x',
  )
  const expected =
    'path: the service knows each file by its path in UTF-8, and this name is not UTF-8 (shown by their bytes): build/caf\\xe9.png. ' +
    'Rename it in UTF-8 (a build tool on another system may have written Latin-1)'
  // The plain tree's listing, and a globber's paths: the same refusal.
  for (const patterns of [['**'], ['**/*.png', 'index.html']]) {
    await assert.rejects(
      scanArtifacts({ root, patterns, includeHidden: false, logger: memoryLogger() }),
      (error: unknown) => {
        assert.ok(error instanceof UsageError, String(error))
        assert.equal(error.message, expected)
        return true
      },
      patterns.join(' '),
    )
  }
  // A folder whose name is not UTF-8 is refused as well, before its files are looked for.
  const folder = await tempDir()
  await writeTree(folder, { 'index.html': 'i' })
  const bad = Buffer.concat([Buffer.from(`${folder}/d`), Buffer.from([0xff, 0x41])])
  mkdirSync(bad)
  writeFileSync(Buffer.concat([bad, Buffer.from('/f.js')]), 'x')
  await assert.rejects(
    scanArtifacts({ root: folder, patterns: ['**'], includeHidden: false, logger: memoryLogger() }),
    /not UTF-8 \(shown by their bytes\): d\\xffA\. Rename it/,
  )
})

test('a path whose store key would pass 1,024 bytes is refused before anything is created', async () => {
  const root = await tempDir()
  // 4 folders of 200 bytes and a name: 5 × 201 - 1 = 1,004 bytes, over 1,024 - 37 with the upload id.
  const deep = [...Array.from({ length: 4 }, (_, i) => `${i}`.repeat(200)), 'x'.repeat(200)].join('/')
  const fits = [...Array.from({ length: 4 }, (_, i) => `${i}`.repeat(200)), 'y'.repeat(183)].join('/')
  assert.equal(Buffer.byteLength(fits), 1024 - 37)
  await writeTree(root, { 'index.html': 'i', [deep]: 'd', [fits]: 'f' })
  await assert.rejects(
    scanArtifacts({ root, patterns: ['**'], includeHidden: false, logger: memoryLogger() }),
    (error: unknown) => {
      assert.ok(error instanceof UsageError, String(error))
      assert.match(
        error.message,
        /^path: the store keeps each file at the key <upload id>\/<path>, at most 1024 bytes, so a path may have 987 bytes of UTF-8; this one has more: 0{200}\/.*x{200} \(1004 bytes\)\. Shorten it/,
      )
      assert.ok(!error.message.includes('y'.repeat(183)), 'a path of 987 bytes fits')
      return true
    },
  )
})

test('every file (the default **) is found as @actions/glob finds it, with or without hidden ones', async () => {
  const root = await tempDir()
  await writeTree(root, {
    'index.html': 'i',
    'a b/ü.js': 'u',
    'assets/0/x.png': 'x',
    'assets/0/deep/er/y.wasm': 'y',
    'assets/.cache/z': 'z',
    '.well-known/t.txt': 't',
    '.env': 'e',
    'a/.hidden': 'h',
  })
  await mkdir(path.join(root, 'empty/nested'), { recursive: true })
  for (const includeHidden of [false, true]) {
    const globber = await actionsGlobModule.create(path.join(root, '**'), {
      matchDirectories: false,
      excludeHiddenFiles: !includeHidden,
    })
    const expected = (await globber.glob()).map((f) => path.relative(root, f).split(path.sep).join('/'))
    const files = await scanArtifacts({ root, patterns: ['**'], includeHidden, logger: memoryLogger() })
    assert.deepEqual(files.map((f) => f.path).sort(), expected.sort())
    assert.equal(files.length, includeHidden ? 8 : 4)
  }
})

test('a site whose folder is itself hidden (like .output) is collected, whatever the patterns', async () => {
  const parent = await tempDir()
  const root = path.join(parent, '.output')
  await writeTree(root, { 'index.html': 'i', 'a/app.js': 'a', 'a/.secret': 's' })
  for (const patterns of [['**'], ['**/*'], ['a', 'index.html']]) {
    const files = await scanArtifacts({ root, patterns, includeHidden: false, logger: memoryLogger() })
    assert.deepEqual(files.map((f) => f.path).sort(), ['a/app.js', 'index.html'], patterns.join(','))
  }
  const all = await scanArtifacts({
    root,
    patterns: ['**/*'],
    includeHidden: true,
    logger: memoryLogger(),
  })
  assert.deepEqual(all.map((f) => f.path).sort(), ['a/.secret', 'a/app.js', 'index.html'])
})

test('a file that grew or shrank between the scan and its hashing is refused', async () => {
  const root = await tempDir()
  const small = 'x'.repeat(1000)
  const big = 'y'.repeat(600 * 1024) // more than one read buffer
  await writeTree(root, { 'grows.txt': small, 'shrinks.txt': small, 'big.bin': big })
  const scanned = await scanArtifacts({
    root,
    patterns: ['**'],
    includeHidden: false,
    logger: memoryLogger(),
  })
  const only = (name: string) => scanned.filter((f) => f.path === name)

  assert.deepEqual(await hashArtifacts(only('big.bin')), [sha256(Buffer.from(big))])

  await appendFile(path.join(root, 'grows.txt'), 'more')
  await assert.rejects(
    hashArtifacts(only('grows.txt')),
    /grows\.txt changed after it was scanned: its size or time is not the scan's \(size 1000 -> 1004\)/,
  )
  await truncate(path.join(root, 'shrinks.txt'), 10)
  await assert.rejects(
    hashArtifacts(only('shrinks.txt')),
    /shrinks\.txt changed after it was scanned: it is shorter than when it was scanned/,
  )
})

test('a file far larger than scanned is refused, naming its sizes', async () => {
  const root = await tempDir()
  await writeTree(root, { 'log.txt': 'x'.repeat(1000) })
  const [file] = await scanArtifacts({ root, patterns: ['**'], includeHidden: false, logger: memoryLogger() })
  await appendFile(path.join(root, 'log.txt'), Buffer.alloc(8 * 1024 * 1024))
  await assert.rejects(
    hashArtifacts([file!]),
    /log\.txt changed after it was scanned: its size or time is not the scan's \(size 1000 -> 8389608\)/,
  )
})

test(
  'links inside path are followed; links leading out of it are skipped with a warning',
  { skip: needsSymlinks },
  async () => {
    const outside = await tempDir()
    await writeTree(outside, { 'secret.txt': 'do not upload' })
    const root = await tempDir()
    await writeTree(root, { 'index.html': 'i' })
    await symlink(path.join(root, 'index.html'), path.join(root, 'alias.html'))
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'leak.txt'))
    await symlink(outside, path.join(root, 'leakdir'))
    const logger = memoryLogger()
    const manifest = await collectArtifacts({ root, patterns: ['**'], includeHidden: false, logger })
    assert.deepEqual(
      manifest.files.map((f) => f.path),
      ['alias.html', 'index.html'],
    )
    assert.ok(logger.lines.some((l) => l.includes('leak.txt') && l.includes('outside path')))
    assert.ok(logger.lines.some((l) => l.includes('leakdir')))
  },
)

test('bad paths and patterns are refused before anything is read', async () => {
  const root = await tempDir()
  await writeTree(root, { 'index.html': 'i' })
  const collect = (r: string, patterns: string[]) =>
    collectArtifacts({ root: r, patterns, includeHidden: false, logger: memoryLogger() })
  await assert.rejects(
    collect(path.join(root, 'missing'), ['**']),
    (e: Error) => e instanceof UsageError && /does not exist/.test(e.message),
  )
  // A relative path says the folder it was looked for in, and the working directory it is taken from.
  const relative = path.relative(process.cwd(), path.join(root, 'build'))
  await assert.rejects(collect(relative, ['**']), (e: Error) => {
    assert.equal(
      e.message,
      `path: '${relative}' does not exist: looked for ${path.join(root, 'build')}, as it is relative to the working directory ${process.cwd()}`,
    )
    return true
  })
  await assert.rejects(collect(path.join(root, 'index.html'), ['**']), /is a file/)
  await assert.rejects(collect(root, ['../**']), /reaches outside path/)
  await assert.rejects(collect(root, ['/etc/**']), /is absolute/)
  await assert.rejects(collect(root, ['*.png']), /no file under .* matches '\*\.png'/)
})

test('the manifest file lists files without absolute paths', async () => {
  const root = await tempDir()
  await writeTree(root, { 'index.html': 'i' })
  const manifest = await collectArtifacts({
    root,
    patterns: ['**'],
    includeHidden: false,
    logger: memoryLogger(),
  })
  const file = await writeManifest(manifest, path.join(await tempDir(), 'manifest.json'))
  const json = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
  assert.equal(json.digest, manifest.digest)
  assert.deepEqual(json.files, [
    {
      path: 'index.html',
      size: 1,
      sha256: sha256(Buffer.from('i')),
      contentType: 'text/html; charset=utf-8',
    },
  ])
  assert.equal(contentTypeOf('x.css'), 'text/css; charset=utf-8')
})

test(
  'a FIFO and a socket are refused before anything is read, each named; --files can leave them out',
  { skip: needsFifo },
  async () => {
    const root = await tempDir()
    await writeTree(root, { 'index.html': 'i', 'a/b.js': 'b' })
    execFileSync('mkfifo', [path.join(root, 'a', 'pipe')])
    const socket = net.createServer()
    await new Promise<void>((resolve) => socket.listen(path.join(root, 'dev.sock'), resolve))
    try {
      for (const patterns of [['**'], ['**/*']]) {
        await assert.rejects(
          // A FIFO opened for reading would block until a writer comes: the scan must never open it.
          scanArtifacts({ root, patterns, includeHidden: false, logger: memoryLogger() }),
          (error: Error) => {
            assert.ok(error instanceof UsageError)
            assert.equal(
              error.message,
              "path: a site holds only regular files; these are not: a/pipe (a FIFO), dev.sock (a socket). Remove them, or leave them out with files: '!<path>'",
            )
            return true
          },
        )
      }
      const files = await scanArtifacts({
        root,
        patterns: ['**', '!a/pipe', '!dev.sock'],
        includeHidden: false,
        logger: memoryLogger(),
      })
      assert.deepEqual(files.map((f) => f.path).sort(), ['a/b.js', 'index.html'])
    } finally {
      await new Promise<void>((resolve) => socket.close(() => resolve()))
    }
  },
)

test(
  'a link to / or to a folder outside path is not walked: one warning per link',
  { skip: needsSymlinks },
  async () => {
    const outside = await tempDir()
    await writeTree(outside, Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}.txt`, 'x'])))
    const root = await tempDir()
    await writeTree(root, { 'index.html': 'i', 'sub/a.js': 'a' })
    await symlink('/', path.join(root, 'slash'))
    await symlink(outside, path.join(root, 'elsewhere'))
    await symlink(path.join(root, 'sub'), path.join(root, 'sub-again'))
    await symlink(path.join(root, 'missing'), path.join(root, 'dangling'))
    for (const patterns of [['**'], ['**/*']]) {
      const logger = memoryLogger()
      const files = await scanArtifacts({ root, patterns, includeHidden: false, logger })
      assert.deepEqual(files.map((f) => f.path).sort(), ['index.html', 'sub/a.js'])
      const warnings = logger.lines.filter((l) => l.startsWith('warning'))
      assert.deepEqual(warnings.sort(), [
        'warning: Skipping dangling: it is a link to nothing',
        'warning: Skipping elsewhere: it is a link that leads outside path',
        'warning: Skipping slash: it is a link that leads outside path',
        'warning: Skipping sub-again: it is a link to a folder inside path, whose files are collected where they are',
      ])
    }
  },
)

test('path: / is refused; a repository root warns, and with include-hidden is refused', async () => {
  await assert.rejects(
    scanArtifacts({ root: '/', patterns: ['**'], includeHidden: false, logger: memoryLogger() }),
    /^UsageError: path: '\/' is the root of the file system; give the folder of the built site/,
  )
  const repo = await tempDir()
  await writeTree(repo, { 'index.html': 'i', '.git/config': '[core]', '.git/objects/ab/cd': 'x' })
  const logger = memoryLogger()
  const files = await scanArtifacts({ root: repo, patterns: ['**'], includeHidden: false, logger })
  assert.deepEqual(
    files.map((f) => f.path),
    ['index.html'],
  )
  assert.ok(
    logger.lines.some((l) => /^warning: path: .* is the root of a git repository \(it holds \.git\)/.test(l)),
  )
  await assert.rejects(
    scanArtifacts({ root: repo, patterns: ['**'], includeHidden: true, logger: memoryLogger() }),
    /is the root of a git repository, and include-hidden would upload its \.git/,
  )
})

test(
  'a tree of many folders is listed level by level in its folders order; a link in one of them hands it to the globber',
  { skip: needsSymlinks },
  async () => {
    const root = await tempDir()
    const tree: Record<string, string> = { 'index.html': 'i' }
    for (let i = 0; i < 40; i++) tree[`assets/${String(i).padStart(2, '0')}/a.js`] = String(i)
    await writeTree(root, tree)
    const scan = (logger = memoryLogger()) =>
      scanArtifacts({ root, patterns: ['**'], includeHidden: false, logger })
    const listed = (await scan()).map((f) => f.path)
    assert.deepEqual(listed.slice().sort(), Object.keys(tree).sort())
    // Each level before the next, and a folder's files together: the order readdir gives, not the order reads end in.
    assert.equal(listed[0], 'index.html')
    const folders = (await readdir(path.join(root, 'assets'))).map((name) => `assets/${name}/a.js`)
    assert.deepEqual(listed.slice(1), folders)
    // A link in the first of 40 folders, met while the next ones are still being read: the globber decides.
    await symlink(path.join(root, 'index.html'), path.join(root, 'assets/00/alias.html'))
    const logger = memoryLogger()
    const files = await scan(logger)
    assert.deepEqual(files.map((f) => f.path).sort(), [...Object.keys(tree), 'assets/00/alias.html'].sort())
  },
)
