// The one "publish and see it" step: whatever changes what a namespace serves (the deploy, promote,
// rollback, the close of a preview, the sweep) sets its version here and then fetches its host until
// it serves the change (verify.ts), within verify-timeout. "Live at" is said only once it was seen;
// not seen, on-verify-failure puts the namespace back, fails or warns (rollback.ts); a check
// cancelled says so, and what the namespace serves.

import type { Dispatcher } from 'undici'
import type { ServiceClient } from '../api/client.ts'
import type { Logger } from '../common/logger.ts'
import type { Clock } from '../common/run.ts'
import { Input } from '../inputs/constants.ts'
import type { Published } from './go-live.ts'
import { notLive, rollBack } from './rollback.ts'
import { readServedRecord, RECORD_PATH } from './site-record.ts'
import {
  verifyLive,
  type PollOptions,
  type ProbedFile,
  type Verification,
  type VerifySettings,
} from './verify.ts'
import type { ServingPlan } from './web-engine.ts'

/** What proves the namespace serves the change: the files it must serve, and the record among them. */
export interface Expected {
  files: readonly ProbedFile[]
  /** The record file on the site (site-record.ts): it matches only when the host serves that very build. */
  record?: ProbedFile
  serving?: ServingPlan
}

export interface LiveRun {
  client: ServiceClient
  dispatcher: Dispatcher
  signal: AbortSignal
  clock: Clock
  timeouts: { stallMs: number }
}

export interface Change {
  gameId: string
  namespaceId: string
  /** For messages: the namespace's name id. */
  nameId: string
  /** The version published, and what the namespace served before (undefined: a namespace made now). */
  published: Published
  /** The namespace already served the version: nothing is set, what it serves is still seen. */
  alreadyServed: boolean
}

export interface SeeOptions {
  settings: VerifySettings
  /** What the host must serve; undefined when nothing can tell the change apart (said, not checked). */
  expected: Expected | { unknown: string }
  run: LiveRun
  logger: Logger
  sleep?: PollOptions['sleep']
  /** The Authorization header of a private namespace's hosts. */
  authorization?: string
  /** Hears of the verification as soon as it ends, seen or not, cancelled included (the journal). */
  onSeen?: (seen: Verification) => void
}

/**
 * Publishes the change (unless the namespace serves it already) and sees it live at its host: the
 * Verification, or undefined when it was not checked (verify false, no URL, nothing to tell it by).
 * Not seen within the bound: on-verify-failure's rollback, failure (a NotLiveError) or warning.
 */
export async function publishAndSee(change: Change, options: SeeOptions): Promise<Verification | undefined> {
  const { gameId, namespaceId, nameId, published } = change
  const { run, logger, settings } = options
  const version = `version '${published.versionName}' (${published.versionId})`
  if (!change.alreadyServed) {
    await run.client.setNamespaceVersion(gameId, namespaceId, published.versionId)
    const before = published.replacedVersionId ? `; it served ${published.replacedVersionId}` : ''
    logger.info(`Published ${version} to namespace ${nameId}${before}`)
  }
  const { url } = published
  if (!url) return undefined
  const unchecked = !settings.enabled
    ? `${Input.Verify} is false`
    : 'unknown' in options.expected
      ? options.expected.unknown
      : undefined
  if (unchecked !== undefined) {
    logger.info(`Published at ${url} (not checked: ${unchecked})`)
    return undefined
  }
  const expected = options.expected as Expected
  const started = run.clock.now()
  let seen: Verification
  try {
    seen = await logger.group('Verify', () =>
      verifyLive({
        url,
        files: expected.files,
        record: expected.record,
        serving: expected.serving,
        settings,
        run,
        logger,
        sleep: options.sleep,
        authorization: options.authorization,
      }),
    )
  } catch (error) {
    if (run.signal.aborted) {
      const durationMs = run.clock.now() - started
      options.onSeen?.({ verified: false, cancelled: true, url, durationMs, attempts: 0, checked: [] })
      logger.info(
        `The check of ${url} was cancelled after ${(durationMs / 1000).toFixed(1)} s: namespace ${nameId} serves ${version}, not yet seen live`,
      )
    }
    throw error
  }
  options.onSeen?.(seen)
  if (seen.verified) return seen
  if (settings.onFailure === 'rollback')
    seen.rolledBackTo = await rollBack(run.client, gameId, namespaceId, published, seen, logger)
  notLive(settings.onFailure, seen, published, nameId, logger)
  return seen
}

/**
 * What proves that a namespace serves a version the run did not build (promote, rollback): the record
 * that another namespace serving it serves (the files it names, and its bytes). Undefined, with why,
 * when no namespace serves it with a record.
 */
export async function expectedFromServed(
  urls: readonly string[],
  run: Pick<LiveRun, 'dispatcher' | 'signal' | 'timeouts'>,
): Promise<Expected | { unknown: string }> {
  const options = { dispatcher: run.dispatcher, signal: run.signal, stallMs: run.timeouts.stallMs }
  const reasons: string[] = []
  for (const url of urls) {
    const served = await readServedRecord(url, options)
    if ('absent' in served) {
      reasons.push(`${url} serves no record of its build (${served.absent})`)
      continue
    }
    const { record, bytes } = served
    const recordFile: ProbedFile = { path: RECORD_PATH, size: bytes.size, sha256: bytes.sha256 }
    return { files: record.files, record: recordFile }
  }
  return {
    unknown: reasons.length
      ? `nothing tells this version apart: ${reasons.join('; ')}`
      : 'no other namespace serves this version, and its site cannot be read but through one',
  }
}
