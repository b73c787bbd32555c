// Private previews: the user added (its password sent only as a bcrypt hash), `basic` set, the host
// seen answering 401 without credentials, and only then the publish.

import bcrypt from 'bcryptjs'
import type { ServiceClient } from '../../api/client.ts'
import { ServiceError, UsageError } from '../../api/errors.ts'
import type { CdnAuthType } from '../../api/types.ts'
import { formatSeconds } from '../../common/format.ts'
import type { Logger } from '../../common/logger.ts'
import { describeProgress, pollUntil, type NotYet, type PollOptions } from '../../common/poll.ts'
import type { BasicAuth } from '../../inputs/basic-auth.ts'
import { Input } from '../../inputs/constants.ts'
import type { HostOptions } from '../collect/record.ts'
import { systemTimer, type Timer } from '../../common/timeouts.ts'
import { hostFetcher } from '../live/verify.ts'
import { inputName } from '../../common/input-naming.ts'

/** The libraries' default; the CDN checks the hash on its side. */
const BCRYPT_COST = 10
/** The CDN applies only the first users; the others' credentials are refused. */
const CDN_AUTH_USERS_APPLIED = 10

export interface NamespaceAccess {
  authType: CdnAuthType
  /** In the service's order. */
  users: string[]
}

export interface AccessTarget {
  client: ServiceClient
  gameId: string
  namespaceId: string
  nameId: string | undefined
  logger: Logger
}

export type WaitUntilPrivate = (url: string) => Promise<void>

export async function readAccess(
  client: ServiceClient,
  gameId: string,
  namespaceId: string,
): Promise<NamespaceAccess> {
  const { cdn } = (await client.getNamespace(gameId, namespaceId)).namespace.config
  return { authType: cdn.auth_type ?? 'none', users: (cdn.auth_user_list ?? []).map((entry) => entry.user) }
}

/** A user of that name is replaced, so a changed password takes effect. `before`: undefined for a new namespace. */
export async function makePrivate(
  target: AccessTarget,
  auth: BasicAuth,
  before: NamespaceAccess | undefined,
  url: string,
  waitUntilPrivate: WaitUntilPrivate,
): Promise<void> {
  const { client, gameId, namespaceId, logger } = target
  const name = target.nameId ?? namespaceId
  const password = await bcrypt.hash(auth.password, BCRYPT_COST)
  try {
    await client.updateNamespaceCdnAuthUser(gameId, namespaceId, { user: auth.user, password })
  } catch (error) {
    if (error instanceof ServiceError && error.code === 'CDN_TOO_MANY_AUTH_USERS') {
      throw new UsageError(
        `Namespace ${name} has the most users of basic auth the service allows (32; then even replacing one ` +
          `is refused): remove the users it no longer needs, then run again. (${error.message})`,
        { cause: error },
      )
    }
    throw error
  }
  const wasPrivate = before?.authType === 'basic'
  if (!wasPrivate) await client.setNamespaceCdnAuthType(gameId, namespaceId, 'basic')
  logger.info(
    wasPrivate
      ? `Namespace ${name} is private: user ${auth.user} set again from ${inputName(Input.BasicAuth)} (its password sent as a bcrypt hash)`
      : `Namespace ${name} is made private before the build is published to it: user ${auth.user} added ` +
          '(its password sent as a bcrypt hash), basic auth on',
  )
  const others = before?.users.filter((user) => user !== auth.user) ?? []
  if (
    others.length >= CDN_AUTH_USERS_APPLIED &&
    !before?.users.slice(0, CDN_AUTH_USERS_APPLIED).includes(auth.user)
  ) {
    logger.warning(
      `Namespace ${name} has ${others.length} other users of basic auth: the CDN applies only the first ` +
        `${CDN_AUTH_USERS_APPLIED}, so user ${auth.user} may be refused. Remove the users it no longer needs`,
    )
  }
  await waitUntilPrivate(url)
}

/** What an empty basic-auth asks for. */
export async function makePublic(target: AccessTarget, before: NamespaceAccess): Promise<void> {
  const { client, gameId, namespaceId, logger } = target
  await client.setNamespaceCdnAuthType(gameId, namespaceId, 'none')
  for (const user of before.users) await client.removeNamespaceCdnAuthUser(gameId, namespaceId, user)
  const removed = before.users.length
    ? `, user${before.users.length === 1 ? '' : 's'} ${before.users.join(', ')} removed`
    : ''
  logger.info(
    `${inputName(Input.BasicAuth)} is empty: namespace ${target.nameId ?? namespaceId} was private and is made public again ` +
      `(basic auth off${removed}); anyone with its URL sees what it serves`,
  )
}

/** `timeoutMs` is verify-timeout's: the CDN applies an auth change as it does a publish. */
export type WaitOptions = HostOptions &
  Omit<PollOptions<NotYet>, 'onNotYet' | 'progress'> & {
    logger: Pick<Logger, 'info' | 'debug'>
    timer?: Timer
  }

export function privateHostWaiter(options: WaitOptions): WaitUntilPrivate {
  const { timeoutMs, logger } = options
  return async (url) => {
    const fetchRoot = hostFetcher(url, options)
    const root = { urlPath: '/', file: { path: '', size: 0, sha256: '' }, compare: 'size' } as const
    logger.info(`Waiting until ${url} answers 401 without credentials, for up to ${timeoutMs / 1000} s`)
    const check = async (): Promise<{ what: string; permanent?: boolean } | undefined> => {
      const seen = await fetchRoot(root)
      if ('reason' in seen) return { what: seen.reason, permanent: seen.permanent }
      return seen.status === 401 ? undefined : { what: `answers ${seen.status}` }
    }
    const polled = await pollUntil(check, {
      ...options,
      onNotYet: (attempt, { what }) => logger.debug(`Check ${attempt}: ${url} ${what} without credentials`),
      progress: {
        timer: options.timer ?? systemTimer,
        say: (progress) =>
          logger.info(
            `Still waiting for ${url} to answer 401 without credentials, ` +
              describeProgress(progress, ({ what }) => `${url} ${what}`),
          ),
      },
    })
    const after = formatSeconds(polled.durationMs)
    if (polled.seen) {
      logger.info(`${url} answers 401 without credentials (after ${after}): it is private`)
      return
    }
    throw new Error(
      `${url} still ${polled.notYet?.what} without credentials after ${after}: the build was not ` +
        `published to it, as it would not be private. Run again (the CDN may be slow: ${inputName(Input.VerifyTimeout)} bounds the wait)`,
    )
  }
}

/** Never the password. */
export function privateNote(user: string): string {
  return `private (basic auth): ask the team for the password of user ${user}`
}
