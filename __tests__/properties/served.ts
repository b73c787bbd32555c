// What a namespace's host serves, read as a browser on this machine reads it, and checked against a
// generated build: each file's status, bytes and content type, and the deploy's record of the build.

import assert from 'node:assert/strict'
import { hash } from 'node:crypto'
import { Agent, fetch } from 'undici'
import { contentTypeOf } from '../../src/deploy/collect/files.ts'
import { RECORD_PATH, type RecordedFile } from '../../src/deploy/collect/record.ts'
import { showPath } from './builds.ts'

export interface Served {
  status: number
  contentType: string | null
  bytes: Buffer
}

/** The URL a browser asks for: each segment of the path percent-encoded. */
export const fileUrl = (siteUrl: string, filePath: string) =>
  `${siteUrl}${filePath.split('/').map(encodeURIComponent).join('/')}`

const FETCHES_AT_ONCE = 8

/**
 * fetchLocally (src/emulator/local-fetch.ts), the body kept as bytes: its text would turn bytes that
 * are not UTF-8 into U+FFFD, and a leading BOM into nothing.
 */
export async function fetchAll(urls: readonly string[]): Promise<Served[]> {
  const agent = new Agent({
    connect: {
      lookup: (_hostname, options, callback) => {
        if ((options as { all?: boolean }).all) callback(null, [{ address: '127.0.0.1', family: 4 }])
        else (callback as unknown as (e: null, address: string, family: number) => void)(null, '127.0.0.1', 4)
      },
    },
  })
  try {
    const served = new Array<Served>(urls.length)
    let next = 0
    const fetchNext = async (): Promise<void> => {
      for (let i = next++; i < urls.length; i = next++) {
        const response = await fetch(urls[i]!, { dispatcher: agent })
        const bytes = Buffer.from(await response.arrayBuffer())
        served[i] = { status: response.status, contentType: response.headers.get('content-type'), bytes }
      }
    }
    await Promise.all(Array.from({ length: FETCHES_AT_ONCE }, fetchNext))
    return served
  } finally {
    await agent.close()
  }
}

const sha256 = (bytes: Buffer) => hash('sha256', bytes)

/**
 * Asserts that the host at `siteUrl` serves exactly `bytes` (path to content), none of the paths
 * `gone` (of a build before), and the deploy's record of the build when `record`, else none unless
 * the build has a file there.
 */
export async function assertServes(
  siteUrl: string,
  bytes: ReadonlyMap<string, Buffer>,
  { gone = [], record = true }: { gone?: readonly string[]; record?: boolean } = {},
): Promise<void> {
  const paths = [...bytes.keys()]
  const urls = [...paths, ...gone].map((p) => fileUrl(siteUrl, p))
  const served = await fetchAll([...urls, `${siteUrl}${RECORD_PATH}`])
  paths.forEach((filePath, i) => {
    const expected = bytes.get(filePath)!
    const { status, contentType, bytes: got } = served[i]!
    const name = showPath(filePath)
    assert.equal(status, 200, `${name} (${urls[i]}) answered ${status}`)
    assert.ok(
      got.equals(expected),
      `${name}: served ${got.length} bytes (sha256 ${sha256(got)}), the build has ${expected.length} (sha256 ${sha256(expected)})` +
        firstDifference(got, expected),
    )
    const type = contentTypeOf(filePath)
    if (type !== undefined) assert.equal(contentType, type, `${name} is served as ${contentType}`)
  })
  gone.forEach((filePath, i) => {
    const { status } = served[paths.length + i]!
    assert.notEqual(status, 200, `${showPath(filePath)}, of a build before, is still served`)
  })
  const recorded = served[urls.length]!
  if (!record) {
    if (!bytes.has(RECORD_PATH)) assert.notEqual(recorded.status, 200, `${RECORD_PATH} is served, unasked`)
    return
  }
  assert.equal(recorded.status, 200, `${RECORD_PATH} answered ${recorded.status}`)
  assertRecordLists(JSON.parse(recorded.bytes.toString('utf8')) as { files: RecordedFile[] }, bytes)
}

function firstDifference(got: Buffer, expected: Buffer): string {
  const length = Math.min(got.length, expected.length)
  for (let i = 0; i < length; i++) if (got[i] !== expected[i]) return `, first differing at byte ${i}`
  return got.length === expected.length ? '' : `, equal up to byte ${length}`
}

function assertRecordLists(record: { files: RecordedFile[] }, bytes: ReadonlyMap<string, Buffer>): void {
  const listed = new Map(record.files.map((file) => [file.path, file]))
  for (const [filePath, content] of bytes) {
    const name = showPath(filePath)
    const entry = listed.get(filePath)
    assert.ok(entry, `${RECORD_PATH} does not list ${name}`)
    assert.equal(entry.size, content.length, `${RECORD_PATH}: the size of ${name}`)
    assert.equal(entry.sha256, sha256(content), `${RECORD_PATH}: the sha256 of ${name}`)
  }
  const extra = record.files.filter((file) => !bytes.has(file.path)).map((f) => showPath(f.path))
  assert.deepEqual(extra, [], `${RECORD_PATH} lists files the build does not have`)
}

/**
 * What the host at `siteUrl` serves at `/`, at the record's path and at each of `paths`: a refusal by
 * its status alone (an unknown host's 404 is the API's, with a ray id of its own each time).
 */
export async function snapshot(siteUrl: string, paths: readonly string[]): Promise<string[]> {
  const urls = [siteUrl, `${siteUrl}${RECORD_PATH}`, ...paths.map((p) => fileUrl(siteUrl, p))]
  const served = await fetchAll(urls)
  return served.map(({ status, contentType, bytes }, i) =>
    status === 200 ? `${urls[i]} 200 ${contentType} sha256:${sha256(bytes)}` : `${urls[i]} ${status}`,
  )
}
