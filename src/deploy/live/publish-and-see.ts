// Whatever changes what a namespace serves (deploy, promote, rollback, close, sweep) sets its version
// here and sees its host serve the change.

import { inputName } from '../../common/input-naming.ts'
import type { ServiceClient } from '../../api/client.ts'
import { errorMessage } from '../../api/errors.ts'
import { capital, formatSeconds } from '../../common/format.ts'
import type { Logger } from '../../common/logger.ts'
import type { OnVerifyFailure } from '../../inputs/common.ts'
import { Input } from '../../inputs/constants.ts'
import type { Published } from './prepare.ts'
import { hostOptionsOf, readServedRecord, RECORD_PATH } from '../collect/record.ts'
import { describeVersion, publishedMeanwhile, PublishedMeanwhileError } from './meanwhile.ts'
import { cannotSee as cannotSeeOf } from './cannot-see.ts'
import {
  describeMismatch,
  describeTiming,
  verifyLive,
  type Expected,
  type VerifyLiveOptions,
  type Verification,
} from './verify.ts'

export interface Change {
  gameId: string
  namespaceId: string
  nameId: string
  published: Published
  /** Nothing is set; what it serves is still seen. */
  alreadyServed: boolean
}

export interface SeeOptions extends Omit<VerifyLiveOptions, 'url' | 'expected'> {
  /** What the host must serve, or must no longer; `unknown` when nothing tells the change apart. */
  expected: Expected | { unknown: string }
  run: VerifyLiveOptions['run'] & { client: ServiceClient }
  logger: Logger
  /** As soon as it ends, cancelled included. */
  onSeen?: (seen: Verification) => void
  onPublished?: () => void
}

/** Undefined when not checked (verify false, no URL, nothing to tell the change by). */
export async function publishAndSee(change: Change, options: SeeOptions): Promise<Verification | undefined> {
  const { gameId, namespaceId, nameId, published } = change
  const { run, logger, settings } = options
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
    const why =
      settings.enabled && 'unknown' in expected ? expected.unknown : `${inputName(Input.Verify)} is false`
    logger.info(`Published at ${url} (not checked: ${why})`)
    return undefined
  }
  const started = run.clock.now()
  const cannotSee = cannotSeeOf({
    client: run.client,
    gameId,
    namespaceId,
    nameId,
    version: published,
    authorized: options.authorization !== undefined,
    logger,
  })
  let seen: Verification
  try {
    seen = await logger.group('Verify', () => verifyLive({ ...options, url, expected, cannotSee }))
  } catch (error) {
    if (run.signal.aborted) {
      const durationMs = run.clock.now() - started
      options.onSeen?.({ verified: false, cancelled: true, url, durationMs, attempts: 0, checked: [] })
      logger.info(
        `The check of ${url} was cancelled after ${formatSeconds(durationMs)}: namespace ${nameId} serves ${versionOf(published)}, not yet seen live`,
      )
    }
    throw error
  }
  options.onSeen?.(seen)
  if (seen.verified) return seen
  // Another run's build is left live: undoing this run's publish would take it down.
  if (settings.onFailure === 'rollback' && !seen.mismatch?.publishedMeanwhile) {
    try {
      seen.rolledBackTo = await putBack(run.client, gameId, namespaceId, published, logger)
    } catch (error) {
      const message = `Not live: ${notLiveAccount(seen)}. ${putBackFailed(published, error)}`
      throw new NotLiveError(message, seen, { cause: error })
    }
  }
  notLive(settings.onFailure, seen, published, nameId, logger)
  return seen
}

/**
 * What proves a namespace serves a version the run did not build, read before it is published: the
 * record served where the version is (`servedAt`), else the record served now, which it must not be.
 */
export async function expectedOfVersion(
  run: Pick<SeeOptions['run'], 'dispatcher' | 'signal' | 'timeouts'>,
  to: { url: string; servedAt: readonly string[]; sameSite: () => Promise<boolean> },
): Promise<SeeOptions['expected']> {
  const options = hostOptionsOf(run)
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

export class NotLiveError extends Error {
  override name = 'NotLiveError'
  readonly verification: Verification
  constructor(message: string, verification: Verification, options?: ErrorOptions) {
    super(message, options)
    this.verification = verification
  }
}

export function notLiveAccount(seen: Verification): string {
  if (seen.mismatch?.publishedMeanwhile)
    return `${seen.mismatch.reason} before ${seen.url} served this build, after ${describeTiming(seen)}`
  const instead = seen.mismatch ? describeMismatch(seen.url, seen.mismatch) : 'nothing was checked'
  if (seen.mismatch?.cannotServe)
    return `${seen.url} cannot serve this build, as found after ${describeTiming(seen)}: ${seen.mismatch.cannotServe}; ${instead}`
  if (seen.mismatch?.permanent) return `${seen.url} could not be checked: ${instead}`
  return `${seen.url} did not serve this build within ${describeTiming(seen)}: ${instead}`
}

export function putBackFailed(published: Published, error: unknown): string {
  if (error instanceof PublishedMeanwhileError)
    return `It was not put back on version ${published.replacedVersionId}: ${error.message}.`
  return (
    `Putting the namespace back on version ${published.replacedVersionId}, which it served before, failed: ` +
    `${errorMessage(error)}. It is left on ${versionOf(published)}.`
  )
}

/**
 * Returns the version it served before the publish, or undefined when there is none. Throws a
 * PublishedMeanwhileError when the namespace is no longer on this run's version.
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
  const other = await publishedMeanwhile(client, gameId, namespaceId, published.versionId)
  if (other) throw new PublishedMeanwhileError(other)
  await client.setNamespaceVersion(gameId, namespaceId, previous)
  logger.info(`Put the namespace back on version ${previous}, which it served before the publish`)
  return previous
}

/** Throws a NotLiveError saying what was done about it, or warns (warn). */
export function notLive(
  onFailure: OnVerifyFailure,
  seen: Verification,
  published: Published,
  nameId: string | undefined,
  logger: Pick<Logger, 'warning'>,
): void {
  const account = notLiveAccount(seen)
  const other = seen.mismatch?.publishedMeanwhile
  if (onFailure === 'warn') {
    const on = other ? `${describeVersion(other)}, the other run's` : versionOf(published)
    logger.warning(
      `Not seen live: ${account}. ${inputName(Input.OnVerifyFailure)} is warn: the run succeeds with verified false, ` +
        `and ${namespaceOf(nameId)} stays on ${on}.`,
      { title: 'Not seen live' },
    )
    return
  }
  const after = other
    ? `It was not put back: ${namespaceOf(nameId)} serves the other run's build.`
    : afterFailure(onFailure, seen.rolledBackTo, published, nameId)
  throw new NotLiveError(`Not live: ${account}. ${after}`, seen)
}

/** What became of the namespace after a failed check (rollback or fail). */
export function afterFailure(
  onFailure: OnVerifyFailure,
  rolledBackTo: string | undefined,
  published: Published,
  nameId: string | undefined,
): string {
  const namespace = namespaceOf(nameId)
  const version = versionOf(published)
  return rolledBackTo !== undefined
    ? `${capital(namespace)} was put back on version ${rolledBackTo}, which it served before.`
    : onFailure === 'fail'
      ? `${inputName(Input.OnVerifyFailure)} is fail: ${namespace} stays on ${version}.`
      : !published.created
        ? `Nothing was published (${namespace} already served ${version}), so nothing was put back.`
        : `${capital(namespace)} served no version before this run, so there is none to put it back on: it stays on ${version}.`
}

const namespaceOf = (nameId: string | undefined) => (nameId ? `namespace ${nameId}` : 'the namespace')
const versionOf = (published: Published) => `version '${published.versionName}' (${published.versionId})`
