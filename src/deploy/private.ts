// Private previews: a namespace's hosts ask for HTTP basic auth (`basic-auth`) before the build is
// ever published to it, in the order the service needs: the user added (its password sent only as a
// bcrypt hash), `basic` set, the host seen answering 401 without credentials, and only then the
// publish. An empty basic-auth makes a private namespace public again.

import { setTimeout as sleepFor } from 'node:timers/promises'
import bcrypt from 'bcryptjs'
import { request, type Dispatcher } from 'undici'
import type { ServiceClient } from '../api/client.ts'
import { ServiceError, UsageError } from '../api/errors.ts'
import type { CdnAuthType } from '../api/types.ts'
import type { Logger } from '../common/logger.ts'
import type { Clock } from '../common/run.ts'
import type { BasicAuth } from '../inputs/basic-auth.ts'
import { Input } from '../inputs/constants.ts'
import { hostRequest } from './site-record.ts'
import { FIRST_WAIT_MS, LONGEST_WAIT_MS } from './verify.ts'
import { inputName } from '../common/input-naming.ts'

/** bcrypt's cost: 2^10 rounds, the libraries' default; the CDN checks the hash on its side. */
const BCRYPT_COST = 10
/** The users the CDN applies, of those the namespace has; the others' credentials are refused. */
const CDN_AUTH_USERS_APPLIED = 10

export interface NamespaceAccess {
  authType: CdnAuthType
  /** Its users' names, in the service's order. */
  users: string[]
}

/** Where the changes go, and who hears of them. */
export interface AccessTarget {
  client: ServiceClient
  gameId: string
  namespaceId: string
  nameId: string | undefined
  logger: Logger
}

/** Waits until the host of `url` answers 401 without credentials; throws when it does not in time. */
export type WaitUntilPrivate = (url: string) => Promise<void>

/** A namespace's basic auth, as the namespace read shows it (public when it says nothing). */
export async function readAccess(
  client: ServiceClient,
  gameId: string,
  namespaceId: string,
): Promise<NamespaceAccess> {
  const { cdn } = (await client.getNamespace(gameId, namespaceId)).namespace.config
  return { authType: cdn.auth_type ?? 'none', users: (cdn.auth_user_list ?? []).map((entry) => entry.user) }
}

/**
 * Makes the namespace private before anything of the build is published to it: adds the user (a
 * user of that name is replaced, so a changed password takes effect), turns basic auth on unless it
 * is on, and waits until its host answers 401 without credentials. `before` is what the namespace
 * read showed; undefined for a namespace this run created (a new namespace is public).
 */
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

/** Turns basic auth off and removes the namespace's users: what an empty basic-auth asks for. */
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

export interface WaitOptions {
  dispatcher: Dispatcher
  signal: AbortSignal
  clock: Clock
  stallMs: number
  /** How long the host may take (verify-timeout: the CDN applies an auth change as it does a publish). */
  timeoutMs: number
  logger: Pick<Logger, 'info' | 'debug'>
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
}

/**
 * Polls the host's `/` without credentials until it answers 401, with the backoff of the seen-live
 * checks (verify.ts); anything else (nothing served yet, what it served before) is waited out.
 */
export function privateHostWaiter(options: WaitOptions): WaitUntilPrivate {
  const { clock, signal, timeoutMs, logger } = options
  const sleep = options.sleep ?? ((ms, s) => sleepFor(ms, undefined, { signal: s }))
  return async (url) => {
    const { origin, base, headers } = hostRequest(url)
    logger.info(`Waiting until ${url} answers 401 without credentials, for up to ${timeoutMs / 1000} s`)
    const started = clock.now()
    let wait = FIRST_WAIT_MS
    for (let attempt = 1; ; attempt++) {
      signal.throwIfAborted()
      const seen = await statusOf(`${origin}${base}/`, headers, options)
      const durationMs = clock.now() - started
      if (seen === 401) {
        logger.info(
          `${url} answers 401 without credentials (after ${(durationMs / 1000).toFixed(1)} s): it is private`,
        )
        return
      }
      const what = typeof seen === 'number' ? `answers ${seen}` : seen
      logger.debug(`Check ${attempt}: ${url} ${what} without credentials`)
      const left = timeoutMs - durationMs
      if (left <= 0) {
        throw new Error(
          `${url} still ${what} without credentials after ${(durationMs / 1000).toFixed(1)} s: the build was not ` +
            `published to it, as it would not be private. Run again (the CDN may be slow: ${inputName(Input.VerifyTimeout)} bounds the wait)`,
        )
      }
      await sleep(Math.min(wait, left), signal)
      wait = Math.min(wait * 2, LONGEST_WAIT_MS)
    }
  }
}

async function statusOf(
  url: string,
  headers: Record<string, string>,
  options: Pick<WaitOptions, 'dispatcher' | 'signal' | 'stallMs'>,
): Promise<number | string> {
  try {
    const answer = await request(url, {
      dispatcher: options.dispatcher,
      method: 'HEAD',
      headers,
      signal: options.signal,
      headersTimeout: options.stallMs,
      bodyTimeout: options.stallMs,
    })
    await answer.body.dump()
    return answer.statusCode
  } catch (error) {
    options.signal.throwIfAborted()
    return `could not be fetched (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`
  }
}

/** What the summary and the comment say of a private namespace: never its password. */
export function privateNote(user: string): string {
  return `private (basic auth): ask the team for the password of user ${user}`
}
