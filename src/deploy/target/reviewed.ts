// reuse-reviewed: a site is immutable, so publishing the site of the namespace that serves this very
// build ships, byte for byte, what was reviewed there. The service's site list names no file and no
// digest, so the namespaces' records are read: first lines only, within REVIEWED_SEARCH_MS; the files
// are hashed, and a whole record read, only where the counts and total size match.

import pLimit from 'p-limit'
import type { ServiceClient } from '../../api/client.ts'
import type { GetGameResponse, NamespaceSummary } from '../../api/types.ts'
import { errorMessage } from '../../api/errors.ts'
import { formatBytes, formatSeconds, plural } from '../../common/format.ts'
import type { Logger } from '../../common/logger.ts'
import { REVIEWED_SEARCH_MS } from '../../common/timeouts.ts'
import type { Manifest } from '../collect/files.ts'
import {
  hostGet,
  readServedRecord,
  recordDescriptor,
  RECORD_PATH,
  type HostOptions,
  type RecordedFile,
} from '../collect/record.ts'
import { closedVersionName, namespaceUrl } from '../live/version-config.ts'
import { Input } from '../../inputs/constants.ts'
import { inputAssignment, inputName } from '../../common/input-naming.ts'

const HEADS_AT_ONCE = 8
/** A record's first line holds its format, commit, ref, digest and counts: far less than this. */
const HEAD_MAX_BYTES = 16 * 1024
const FILES_AFTER_HEAD = ',"files":['
const DIGEST = /^sha256:[0-9a-f]{64}$/
const LISTED = 5

interface RecordHead {
  digest: string
  fileCount: number
  totalBytes: number
  commit?: string
}

/** A namespace, and the head of the record its host serves or why there is none. */
interface SeenNamespace {
  nameId: string
  versionId: string
  url: string
  head?: RecordHead
  absent?: string
}

interface ReusedBuild {
  nameId: string
  siteId: string
  digest: string
  commit?: string
  /** The record the site serves, which seen-live fetches to see every file of the build in one go. */
  record: { path: string; size: number; sha256: string; contentType: string }
}

export type ReviewedOutcome =
  { reused: ReusedBuild; manifest: Manifest } | { unmatched: string; manifest?: Manifest }

export interface ReviewedSearch {
  client: Pick<ServiceClient, 'getVersion'>
  gameId: string
  game: Pick<GetGameResponse['game'], 'name_id' | 'namespaces' | 'versions'>
  cdnDomain: string
  /** The namespace deployed to: its own site is taken last, when no other namespace serves the build. */
  target?: string
  /** skip-unchanged is off: the target's own site is not reused, only another namespace's. */
  targetLeftOut?: boolean
  local: { fileCount: number; totalBytes: number }
  /** When hashed already. */
  manifest?: Manifest
  hash: () => Promise<Manifest>
  host: Omit<HostOptions, 'authorization'>
  logger: Logger
  /** Aborts the reading of the heads (default after REVIEWED_SEARCH_MS). */
  budget?: AbortSignal
}

export interface ReviewedBytes {
  reusedFrom: string
  digest: string
  /** The commit the record names: the build's, made where it was reviewed. */
  commit?: string
  servedAlready?: boolean
}

/** The proof in words: "the bytes reviewed in pr-12 (sha256:…)", and the commit its record names. */
export function reviewedBytes(reviewed: ReviewedBytes): string {
  const { reusedFrom, digest } = reviewed
  const commit = reviewed.commit ? `, built from commit ${reviewed.commit.slice(0, 7)}` : ''
  const bytes = reviewed.servedAlready
    ? `the bytes ${reusedFrom} serves already`
    : `the bytes reviewed in ${reusedFrom}`
  return `${bytes} (${digest})${commit}`
}

const PULL_REQUEST_REF = /^refs\/pull\/\d+\//

/** Undefined when it does not look (off, no CDN domain, no record, or a preview); what it found is logged. */
export async function lookForReviewedBuild(
  search: Omit<ReviewedSearch, 'cdnDomain'> & {
    cdnDomain: string | undefined
    inputs: { reuseReviewed: boolean; siteRecord: boolean; ref: string | undefined }
  },
): Promise<{ outcome: ReviewedOutcome; account: ReviewedBytes | { unmatched: string } } | undefined> {
  const { inputs, cdnDomain, logger } = search
  if (!inputs.reuseReviewed || !cdnDomain) return undefined
  // The sweep knows a preview by the pull request its record names: another build's record would hide it.
  if (PULL_REQUEST_REF.test(inputs.ref ?? '')) {
    logger.debug(`No namespace's build is looked for: a preview serves its own record`)
    return undefined
  }
  if (!inputs.siteRecord) {
    logger.info(
      `No namespace's build is looked for (${inputName(Input.ReuseReviewed)}): ${inputAssignment(Input.SiteRecord, 'false')}, and a reviewed site serves its record`,
    )
    return undefined
  }
  const outcome = await findReviewedBuild({ ...search, cdnDomain })
  if ('unmatched' in outcome) {
    logger.info(`No reviewed build is this one: ${outcome.unmatched}. The files are uploaded.`)
    return { outcome, account: { unmatched: outcome.unmatched } }
  }
  const { nameId, siteId, digest, commit } = outcome.reused
  const account: ReviewedBytes = {
    reusedFrom: nameId,
    digest,
    ...(commit ? { commit } : {}),
    ...(nameId === search.target ? { servedAlready: true } : {}),
  }
  logger.info(
    `The files are ${reviewedBytes(account)}: site ${siteId} is published, 0 bytes uploaded ` +
      `(${inputAssignment(Input.ReuseReviewed, 'false')} uploads anyway)`,
  )
  return { outcome, account }
}

/** The namespace whose served build is this one, with its site, or why none is. Never fails the deploy. */
export async function findReviewedBuild(search: ReviewedSearch): Promise<ReviewedOutcome> {
  const { logger, local } = search
  const namespaces = namespacesToRead(search)
  if (!namespaces.length) return { unmatched: 'no other namespace of the game serves a build' }
  const seen = await readHeads(namespaces, search)
  logger.info(describeRead(seen))
  const sameSize = seen.filter(({ head }) => head && sameCounts(head, local))
  if (!sameSize.length) return { unmatched: noneOfThatSize(local, seen) }
  const manifest = search.manifest ?? (await search.hash())
  const sameDigest = sameSize.filter(({ head }) => head?.digest === manifest.digest)
  const refused: string[] = []
  for (const candidate of sameDigest) {
    const confirmed = await confirm(search, candidate, manifest)
    if ('reused' in confirmed) return { reused: confirmed.reused, manifest }
    refused.push(confirmed.refused)
  }
  if (refused.length) return { unmatched: refused.join('; '), manifest }
  return { unmatched: await notReproducible(search, sameSize[0]!, manifest), manifest }
}

/** Newest first, the target last; none serving the closed page (close.ts names its version after it). */
export function namespacesToRead(
  search: Pick<ReviewedSearch, 'game' | 'cdnDomain' | 'target' | 'targetLeftOut'>,
): Array<Pick<SeenNamespace, 'nameId' | 'versionId' | 'url'>> {
  const { game, target } = search
  const versionNames = new Map(game.versions.map((v) => [v.version_id, v.display_name]))
  const closed = (ns: NamespaceSummary) =>
    versionNames.get(ns.version_id)?.startsWith(closedVersionName(ns.name_id, undefined)) ?? false
  const rank = (ns: NamespaceSummary) => (ns.name_id === target ? -Infinity : Date.parse(ns.create_ts) || 0)
  return game.namespaces
    .filter((ns) => !closed(ns) && !(search.targetLeftOut && ns.name_id === target))
    .sort((a, b) => rank(b) - rank(a))
    .map((ns) => ({
      nameId: ns.name_id,
      versionId: ns.version_id,
      url: namespaceUrl(search.cdnDomain, game.name_id, ns.name_id),
    }))
}

async function readHeads(
  namespaces: ReadonlyArray<Pick<SeenNamespace, 'nameId' | 'versionId' | 'url'>>,
  search: ReviewedSearch,
): Promise<SeenNamespace[]> {
  const budget = search.budget ?? AbortSignal.timeout(REVIEWED_SEARCH_MS)
  const signal = AbortSignal.any([search.host.signal, budget])
  const limit = pLimit(HEADS_AT_ONCE)
  return Promise.all(
    namespaces.map((ns) =>
      limit(async (): Promise<SeenNamespace> => {
        search.host.signal.throwIfAborted()
        if (budget.aborted) return { ...ns, absent: notInTime(search) }
        // Past the budget a read is abandoned (readRecordHead throws the abort): the run goes on without it.
        const read = await readRecordHead(ns.url, { ...search.host, signal }).catch((error: unknown) => {
          if (search.host.signal.aborted || !budget.aborted) throw error
          return { absent: notInTime(search) }
        })
        search.host.signal.throwIfAborted()
        return { ...ns, ...read }
      }),
    ),
  )
}

const notInTime = (search: ReviewedSearch) =>
  search.budget ? 'it was not read in time' : `it was not read within ${formatSeconds(REVIEWED_SEARCH_MS)}`

/** The first line of the record the host serves, read alone; or why there is none. */
export async function readRecordHead(
  url: string,
  options: HostOptions,
): Promise<{ head: RecordHead } | { absent: string }> {
  try {
    const answer = await hostGet(url, `/${RECORD_PATH}`, options)
    if (answer.statusCode !== 200) {
      await answer.body.dump()
      const asks = answer.statusCode === 401 ? ': it is private, and read without credentials' : ''
      return { absent: `it answered ${answer.statusCode}${asks}` }
    }
    const line = await firstLine(answer.body as AsyncIterable<Buffer>)
    if (line === undefined)
      return { absent: `its record has no first line of at most ${HEAD_MAX_BYTES} bytes` }
    const head = parseRecordHead(line)
    return typeof head === 'string' ? { absent: `its record's first line ${head}` } : { head }
  } catch (error) {
    options.signal.throwIfAborted()
    return { absent: `it could not be fetched: ${errorMessage(error)}` }
  }
}

/** Stops reading at the first line break: the files after it are not fetched. */
async function firstLine(body: AsyncIterable<Buffer>): Promise<string | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    const end = chunk.indexOf(0x0a)
    chunks.push(end < 0 ? chunk : chunk.subarray(0, end))
    size += end < 0 ? chunk.length : end
    if (size > HEAD_MAX_BYTES) return undefined
    if (end >= 0) return Buffer.concat(chunks).toString('utf8')
  }
  return undefined
}

/** The head record.ts writes first (`{...,"totalBytes":n,"files":[`), or what is wrong with the line. */
export function parseRecordHead(line: string): RecordHead | string {
  if (!line.endsWith(FILES_AFTER_HEAD)) return 'does not end where its files begin'
  let value: unknown
  try {
    value = JSON.parse(`${line.slice(0, -FILES_AFTER_HEAD.length)}}`)
  } catch {
    return 'is not JSON'
  }
  const head = value as Partial<RecordHead & { format: unknown }> | null
  if (typeof head !== 'object' || head === null || head.format !== 1) return 'is not of format 1'
  const { digest, fileCount, totalBytes, commit } = head
  if (typeof digest !== 'string' || !DIGEST.test(digest)) return 'has no digest'
  const count = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0
  if (!count(fileCount) || !count(totalBytes)) return 'has no file count or total size'
  return {
    digest,
    fileCount: fileCount!,
    totalBytes: totalBytes!,
    ...(typeof commit === 'string' ? { commit } : {}),
  }
}

const sameCounts = (head: RecordHead, local: ReviewedSearch['local']) =>
  head.fileCount === local.fileCount && head.totalBytes === local.totalBytes

const buildOf = ({ fileCount, totalBytes }: ReviewedSearch['local']) =>
  `${plural(fileCount, 'file')} and ${formatBytes(totalBytes)}`

export function describeRead(seen: readonly SeenNamespace[]): string {
  const read = seen.filter((ns) => ns.head).map((ns) => ns.nameId)
  const unread = seen.filter((ns) => ns.absent).map((ns) => `${ns.nameId} (${ns.absent})`)
  return (
    `Looked for this build in the records that ${plural(seen.length, 'namespace')} of the game serve: ` +
    [read.length ? `read from ${listNames(read)}` : '', unread.length ? `none from ${listNames(unread)}` : '']
      .filter(Boolean)
      .join('; ')
  )
}

/** Why no namespace serves this build, when none serves as many files of the same total size. */
export function noneOfThatSize(local: ReviewedSearch['local'], seen: readonly SeenNamespace[]): string {
  const served = seen.filter((ns) => ns.head)
  const others = served.slice(0, LISTED).map((ns) => `${ns.nameId} serves ${buildOf(ns.head!)}`)
  if (served.length > LISTED) others.push(`${served.length - LISTED} more serve others`)
  const unread = seen.filter((ns) => ns.absent).map((ns) => ns.nameId)
  if (unread.length)
    others.push(`${listNames(unread)} ${unread.length === 1 ? 'has' : 'have'} no record that could be read`)
  return `no namespace serves a build of ${buildOf(local)}${others.length ? ` (${others.join('; ')})` : ''}`
}

/** The whole record names this build and its files, and the namespace's version names the site. */
async function confirm(
  search: ReviewedSearch,
  candidate: SeenNamespace,
  manifest: Manifest,
): Promise<{ reused: ReusedBuild } | { refused: string }> {
  const { nameId } = candidate
  const served = await readServedRecord(candidate.url, search.host)
  if ('absent' in served) return { refused: `${nameId} serves this build's digest, but ${served.absent}` }
  const { record, bytes } = served
  if (record.digest !== manifest.digest)
    return { refused: `${nameId} served another build when read again (${record.digest})` }
  const differ = differingFiles(manifest.files, record.files)
  if (differ.length)
    return { refused: `${nameId}'s record names this build's digest but other files (${listNames(differ)})` }
  let siteId: string | undefined
  try {
    const { version } = await search.client.getVersion(search.gameId, candidate.versionId)
    siteId = version.config.cdn?.site_id
  } catch (error) {
    search.host.signal.throwIfAborted()
    return { refused: `${nameId}'s version ${candidate.versionId} could not be read: ${errorMessage(error)}` }
  }
  if (!siteId) return { refused: `${nameId}'s version ${candidate.versionId} names no site` }
  return {
    reused: {
      nameId,
      siteId,
      digest: record.digest,
      ...(record.commit ? { commit: record.commit } : {}),
      record: { ...recordDescriptor(bytes.size), sha256: bytes.sha256 },
    },
  }
}

/** A namespace serves as many files of the same total size, but not this build: which files differ. */
async function notReproducible(
  search: ReviewedSearch,
  candidate: SeenNamespace,
  manifest: Manifest,
): Promise<string> {
  const { nameId, head } = candidate
  const same = `${nameId} serves ${buildOf(manifest)} too, but its digest is ${head!.digest}, not ${manifest.digest}`
  const served = await readServedRecord(candidate.url, search.host)
  if ('absent' in served) return `${same}: another build, or one that is not byte-reproducible`
  const differ = differingFiles(manifest.files, served.record.files)
  if (!differ.length) return `${same}: the same files, with other content types`
  const which = `${differ.length === 1 ? 'a file differs' : `${differ.length} files differ`} (${listNames(differ)})`
  return `${same}: ${which}, so it is another build, or one that is not byte-reproducible`
}

/** This build's files that the record does not list with the same size and SHA-256. */
export function differingFiles(
  files: ReadonlyArray<Pick<RecordedFile, 'path' | 'size' | 'sha256'>>,
  recorded: readonly RecordedFile[],
): string[] {
  const served = new Map(recorded.map((f) => [f.path, f]))
  const differ = files.filter((f) => {
    const other = served.get(f.path)
    return other?.size !== f.size || other.sha256 !== f.sha256
  })
  if (differ.length || files.length === recorded.length) return differ.map((f) => f.path)
  const local = new Set(files.map((f) => f.path))
  return recorded.filter((f) => !local.has(f.path)).map((f) => f.path)
}

function listNames(paths: readonly string[]): string {
  const listed = paths.slice(0, LISTED).join(', ')
  return paths.length > LISTED ? `${listed} and ${paths.length - LISTED} more` : listed
}
