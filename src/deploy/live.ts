// The one "publish and see it" step: whatever changes what a namespace serves (the deploy, promote,
// rollback, the close of a preview, the sweep) sets its version here and then fetches its host until
// it serves the change (verify.ts), within verify-timeout. "Live at" is said only once it was seen;
// not seen, on-verify-failure puts the namespace back, fails or warns (below); a check
// cancelled says so, and what the namespace serves.

import { inputName } from '../common/input-naming.ts'
import type { Dispatcher } from 'undici'
import type { ServiceClient } from '../api/client.ts'
import { errorMessage } from '../api/errors.ts'
import type { Logger } from '../common/logger.ts'
import { pollUntil } from '../common/poll.ts'
import type { Clock } from '../common/timeouts.ts'
import type { OnVerifyFailure, VerifySettings } from '../inputs/common.ts'
import { Input } from '../inputs/constants.ts'
import type { Published } from './go-live.ts'
import { readServedRecord, RECORD_PATH } from './site-record.ts'
import {
  describeMismatch,
  describeTiming,
  verifyLive,
  type Mismatch,
  type PollOptions,
  type ProbedFile,
  type Verification,
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

/** The record the host served before the publish: the change is seen when it serves another. */
export interface OtherThan {
  otherThan: { sha256: string }
}

export interface SeeOptions {
  settings: VerifySettings
  /** What the host must serve, or what it must no longer; `unknown` when nothing tells the change apart. */
  expected: Expected | OtherThan | { unknown: string }
  run: LiveRun
  logger: Logger
  sleep?: PollOptions['sleep']
  /** The Authorization header of a private namespace's hosts. */
  authorization?: string
  /** Hears of the verification as soon as it ends, seen or not, cancelled included (the journal). */
  onSeen?: (seen: Verification) => void
  /** Hears that the version was set (before it is seen). */
  onPublished?: () => void
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
    logger.info(
      `Published version '${published.versionName}' to namespace ${nameId} (${namespaceId})${before}`,
    )
    options.onPublished?.()
  }
  const { url } = published
  if (!url) return undefined
  const { expected } = options
  if (!settings.enabled || 'unknown' in expected) {
    const why = 'unknown' in expected ? expected.unknown : `${inputName(Input.Verify)} is false`
    logger.info(
      `Published at ${url} (not checked: ${!settings.enabled ? `${inputName(Input.Verify)} is false` : why})`,
    )
    return undefined
  }
  const started = run.clock.now()
  let seen: Verification
  try {
    seen = await logger.group('Verify', () =>
      'otherThan' in expected
        ? seeRecordChange(url, expected.otherThan.sha256, options)
        : verifyLive({
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
 * Polls the host's record until it is another than the one it served before the publish: the edge
 * serves the namespace's new config (a version whose build no namespace serves, as a rollback's).
 */
async function seeRecordChange(url: string, before: string, options: SeeOptions): Promise<Verification> {
  const { run, logger, settings } = options
  const record = { dispatcher: run.dispatcher, signal: run.signal, stallMs: run.timeouts.stallMs }
  const urlPath = `/${RECORD_PATH}`
  logger.info(
    `Checking that ${url} serves another build than before, for up to ${settings.timeoutMs / 1000} s: ${urlPath} (its record)`,
  )
  const polled = await pollUntil(
    async (): Promise<Mismatch | undefined> => {
      const served = await readServedRecord(url, record)
      if ('absent' in served) return { urlPath, reason: served.absent.replace(/^it /, '') }
      if (served.bytes.sha256 !== before) return undefined
      return { urlPath, reason: 'is still the record of the build it served before the publish' }
    },
    {
      timeoutMs: settings.timeoutMs,
      clock: run.clock,
      signal: run.signal,
      sleep: options.sleep,
      onNotYet: (attempt, mismatch) => logger.debug(`Check ${attempt}: ${describeMismatch(url, mismatch)}`),
    },
  )
  const { seen: verified, attempts, durationMs, notYet } = polled
  const checked: Verification['checked'] = [
    { urlPath, file: { path: RECORD_PATH, size: 0, sha256: before }, compare: 'content' },
  ]
  const seen: Verification = {
    verified,
    url,
    durationMs,
    attempts,
    checked,
    ...(notYet ? { mismatch: notYet } : {}),
  }
  if (verified)
    logger.info(`Live at ${url}: seen after ${describeTiming(seen)}, serving another build than before`)
  return seen
}

/**
 * What proves that a namespace serves a version the run did not build (promote, rollback), read before
 * it is published: the record a namespace serving it serves (`servedAt`: the others that serve it, or
 * the namespace itself when nothing changes), the files it names and its bytes; else the record the
 * namespace serves now, which it must no longer serve. `unknown` when nothing tells them apart.
 */
export async function expectedOfVersion(
  run: Pick<LiveRun, 'dispatcher' | 'signal' | 'timeouts'>,
  to: { url: string; servedAt: readonly string[]; sameSite: () => Promise<boolean> },
): Promise<SeeOptions['expected']> {
  const options = { dispatcher: run.dispatcher, signal: run.signal, stallMs: run.timeouts.stallMs }
  const absent: string[] = []
  for (const url of to.servedAt) {
    const served = await readServedRecord(url, options)
    if ('absent' in served) absent.push(`${url} serves no record of its build (${served.absent})`)
    else {
      const { size, sha256 } = served.bytes
      return { files: served.record.files, record: { path: RECORD_PATH, size, sha256 } }
    }
  }
  const unknown = (why: string) => ({ unknown: [...absent, why].join('; ') })
  if (to.servedAt.includes(to.url)) return unknown('nothing tells the version apart')
  if (await to.sameSite()) return unknown('it serves the same site as the version before')
  const before = await readServedRecord(to.url, options)
  if ('absent' in before) return unknown(`${to.url} served no record before (${before.absent})`)
  return { otherThan: { sha256: before.bytes.sha256 } }
}

// Not seen within verify-timeout: on-verify-failure puts the namespace back on the version it served
// before (rollback), fails as it is (fail), or warns (warn). Never a silent success.

/** The deploy published a build its namespace's host did not serve within the bound. */
export class NotLiveError extends Error {
  override name = 'NotLiveError'
  readonly verification: Verification
  constructor(message: string, verification: Verification, options?: ErrorOptions) {
    super(message, options)
    this.verification = verification
  }
}

export function isNotLive(error: unknown): error is NotLiveError {
  return error instanceof NotLiveError
}

/** "https://…/ did not serve this build within 300.0 s (34 checks): / answered 404, not 200 with index.html". */
export function notLiveAccount(seen: Verification): string {
  const instead = seen.mismatch ? describeMismatch(seen.url, seen.mismatch) : 'nothing was checked'
  if (seen.mismatch?.permanent) return `${seen.url} could not be checked: ${instead}`
  return `${seen.url} did not serve this build within ${describeTiming(seen)}: ${instead}`
}

/**
 * A namespace that served another version before the publish is put back on it (the publish's
 * replacedVersionId); returns that version, or undefined when there is none to go back to (a new
 * namespace, or nothing was published). A failure to put it back is thrown, with the account.
 */
export async function rollBack(
  client: ServiceClient,
  gameId: string,
  namespaceId: string,
  published: Published,
  seen: Verification,
  logger: Pick<Logger, 'info'>,
): Promise<string | undefined> {
  try {
    return await putBack(client, gameId, namespaceId, published, logger)
  } catch (error) {
    throw new NotLiveError(
      `Not live: ${notLiveAccount(seen)}. Putting the namespace back on version ${published.replacedVersionId}, which it served ` +
        `before, failed: ${errorMessage(error)}. It is left on version '${published.versionName}' (${published.versionId}).`,
      seen,
      { cause: error },
    )
  }
}

/**
 * Puts the namespace back on the version it served before the publish (rollBack's, and the smoke
 * test's on failure); returns it, or undefined when there is none. The service's refusal is thrown.
 */
export async function putBack(
  client: ServiceClient,
  gameId: string,
  namespaceId: string,
  published: Published,
  logger: Pick<Logger, 'info'>,
): Promise<string | undefined> {
  const previous = published.replacedVersionId
  if (!published.created || !previous || previous === published.versionId) return undefined
  await client.setNamespaceVersion(gameId, namespaceId, previous)
  logger.info(`Put the namespace back on version ${previous}, which it served before the publish`)
  return previous
}

/**
 * The end of a deploy not seen live: a NotLiveError saying what the host served instead and what was
 * done about it (rollback, fail), or a warning (warn), after which the run succeeds with `verified` false.
 */
export function notLive(
  onFailure: OnVerifyFailure,
  seen: Verification,
  published: Published,
  nameId: string | undefined,
  logger: Pick<Logger, 'warning'>,
): void {
  const account = notLiveAccount(seen)
  const namespace = nameId ? `namespace ${nameId}` : 'the namespace'
  const version = `version '${published.versionName}' (${published.versionId})`
  if (onFailure === 'warn') {
    logger.warning(
      `Not seen live: ${account}. ${inputName(Input.OnVerifyFailure)} is warn: the run succeeds with verified false, ` +
        `and ${namespace} stays on ${version}.`,
      { title: 'Not seen live' },
    )
    return
  }
  throw new NotLiveError(
    `Not live: ${account}. ${afterFailure(onFailure, seen.rolledBackTo, published, nameId)}`,
    seen,
  )
}

/** What became of the namespace after a failed check (on-verify-failure rollback or fail), in a sentence. */
export function afterFailure(
  onFailure: OnVerifyFailure,
  rolledBackTo: string | undefined,
  published: Published,
  nameId: string | undefined,
): string {
  const namespace = nameId ? `namespace ${nameId}` : 'the namespace'
  const version = `version '${published.versionName}' (${published.versionId})`
  const Namespace = namespace.charAt(0).toUpperCase() + namespace.slice(1)
  return rolledBackTo !== undefined
    ? `${Namespace} was put back on version ${rolledBackTo}, which it served before.`
    : onFailure === 'fail'
      ? `${inputName(Input.OnVerifyFailure)} is fail: ${namespace} stays on ${version}.`
      : !published.created
        ? `Nothing was published (${namespace} already served ${version}), so nothing was put back.`
        : `${Namespace} served no version before this run, so there is none to put it back on: it stays on ${version}.`
}
