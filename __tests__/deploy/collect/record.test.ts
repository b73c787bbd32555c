import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, test } from 'node:test'
import { buildManifest, type ArtifactFile } from '../../../src/deploy/collect/files.ts'
import {
  checkRecordPathFree,
  parseRecord,
  readRecordBody,
  recordFile,
  recordSize,
  RECORD_MAX_BYTES,
  RECORD_PATH,
} from '../../../src/deploy/collect/record.ts'

const file = (path: string, size: number): ArtifactFile => ({
  path,
  absolutePath: `/build/${path}`,
  size,
  mtimeMs: 0,
  dev: 1,
  ino: size,
})
const sha = (text: string) => createHash('sha256').update(text).digest('hex')

describe('the record of the build', () => {
  const files = [file('index.html', 120), file('Build/game.wasm', 4_000_000), file('名前 "quoted".js', 7)]
  const manifest = buildManifest(files, [sha('a'), sha('b'), sha('c')])
  const source = { commit: 'f'.repeat(40), ref: 'refs/heads/main' }

  test('names the commit, ref, digest and each file (path, size, SHA-256), and leaves itself out', () => {
    const record = recordFile(manifest, source)
    assert.equal(record.path, RECORD_PATH)
    const parsed = JSON.parse(record.bytes.toString('utf8')) as Record<string, unknown>
    assert.deepEqual(parsed, {
      format: 1,
      commit: source.commit,
      ref: source.ref,
      digest: manifest.digest,
      fileCount: 3,
      totalBytes: 4_000_127,
      files: manifest.files.map(({ path, size, sha256 }) => ({ path, size, sha256 })),
    })
    assert.equal(record.sha256, sha(record.bytes.toString('utf8')))
    assert.equal(record.size, record.bytes.length)
  })

  test('its size is known before any file is hashed, whatever the names and the source', () => {
    for (const from of [source, {}, { commit: 'x"\u2028y', ref: 'ü' }]) {
      assert.equal(recordSize(files, from), recordFile(manifest, from).size)
    }
  })

  test('parses what it writes, and refuses what is not a record', () => {
    const record = recordFile(manifest, source)
    const parsed = parseRecord(record.bytes.toString('utf8'))
    assert.ok(typeof parsed !== 'string')
    assert.equal(parsed.commit, source.commit)
    assert.equal(parsed.totalBytes, manifest.totalBytes)
    assert.equal(parseRecord('<html>'), 'it is not JSON')
    assert.match(parseRecord('{"format":2,"digest":"x","files":[]}') as string, /format is 2/)
    assert.match(
      parseRecord('{"format":1,"digest":"x","files":[{"path":"a","size":-1}]}') as string,
      /a file/,
    )
  })

  test('a build holding a file at its path is refused', () => {
    assert.throws(() => checkRecordPathFree([file(RECORD_PATH, 3)]), /site-record: false/)
    assert.doesNotThrow(() => checkRecordPathFree(files))
  })
})

describe('readRecordBody', () => {
  test('a record read whole gives its digest; no record, or one past the bound, says why', async () => {
    const record = recordFile(buildManifest([], []), { commit: 'abc' }).bytes
    async function* chunks(...parts: Buffer[]) {
      yield* parts
    }
    const read = await readRecordBody(chunks(record.subarray(0, 10), record.subarray(10)))
    assert.ok('record' in read)
    assert.deepEqual(read.bytes, {
      size: record.length,
      sha256: createHash('sha256').update(record).digest('hex'),
    })
    assert.match(
      ((await readRecordBody(chunks(Buffer.from('<html>')))) as { notRecord: string }).notRecord,
      /^is not a record: /,
    )
    let given = 0
    async function* endless() {
      const mebibyte = Buffer.alloc(1024 * 1024, 0x20)
      for (;;) {
        given++
        yield mebibyte
      }
    }
    assert.deepEqual(await readRecordBody(endless()), {
      notRecord: `is larger than ${RECORD_MAX_BYTES} bytes`,
    })
    assert.equal(given, RECORD_MAX_BYTES / (1024 * 1024) + 1, 'read no further than the bound')
  })
})
