// When a publish is not seen live within `verify-timeout`: `on-verify-failure` chooses between putting
// the namespace back on the version it served before (rollback), failing as it is (fail), and a
// warning (warn). Never a silent success.

import type { ServiceClient } from '../api/client.ts'
import { errorMessage } from '../api/errors.ts'
import type { Logger } from '../common/logger.ts'
import { Input } from '../inputs/constants.ts'
import type { Published } from './go-live.ts'
import { describeMismatch, describeTiming, type OnVerifyFailure, type Verification } from './verify.ts'
import { inputName } from '../common/input-naming.ts'

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
  const previous = published.replacedVersionId
  try {
    return await putBack(client, gameId, namespaceId, published, logger)
  } catch (error) {
    throw new NotLiveError(
      `Not live: ${notLiveAccount(seen)}. Putting the namespace back on version ${previous}, which it served ` +
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
