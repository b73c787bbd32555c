// Why no later check can see a change, asked from the API after each check that did not see it, so
// that a wait that cannot succeed ends at once instead of after verify-timeout: another run published
// over it (meanwhile.ts); the version has no CDN site, so its host will serve no file at all (known
// before the edge even applies it, which on a busy service takes minutes of answering 404); or the
// host answers 401 while the namespace is private and the run has no credentials for it.

import type { ServiceClient } from '../../api/client.ts'
import { errorMessage } from '../../api/errors.ts'
import type { GameVersion } from '../../api/types.ts'
import type { Logger } from '../../common/logger.ts'
import { describeVersion, publishedMeanwhile } from './meanwhile.ts'
import type { Mismatch } from './verify.ts'

interface Watched {
  client: ServiceClient
  gameId: string
  namespaceId: string
  nameId: string
  /** The version the namespace was set to. */
  version: { versionId: string; versionName: string }
  /** The check sends credentials. */
  authorized: boolean
  logger: Pick<Logger, 'debug'>
}

/** A mismatch no later check can get past, for the one given; undefined while one still may. */
export function cannotSee(watched: Watched): (mismatch: Mismatch) => Promise<Mismatch | undefined> {
  const { client, gameId, namespaceId, version, logger } = watched
  const unread = (what: string) => (error: unknown) => {
    logger.debug(`${what} could not be read: ${errorMessage(error)}`)
    return undefined
  }
  // A version never changes: read once, unless the read failed.
  let read: Promise<GameVersion | undefined> | undefined
  const readVersion = () =>
    (read ??= client.getVersion(gameId, version.versionId).then(
      (answer) => answer.version,
      (error: unknown) => {
        read = undefined
        return unread(`Version ${version.versionId}`)(error)
      },
    ))
  return async (mismatch) => {
    const other = await publishedMeanwhile(client, gameId, namespaceId, version.versionId).catch(
      unread(`What namespace ${watched.nameId} is on`),
    )
    if (other) {
      const reason = `another run published ${describeVersion(other)} to the namespace`
      return { urlPath: '/', reason, permanent: true, publishedMeanwhile: other }
    }
    const config = (await readVersion())?.config
    if (config && !config.cdn?.site_id)
      return cannotServe(
        mismatch,
        `${describeVersion(version)}, which namespace ${watched.nameId} is on, has no CDN site (no cdn in its config: ` +
          'no deploy made it), so its host will serve no file at all',
      )
    if (mismatch.status === 401 && !watched.authorized) {
      const namespace = await client
        .getNamespace(gameId, namespaceId)
        .catch(unread(`Namespace ${watched.nameId}`))
      if (namespace?.namespace.config.cdn.auth_type === 'basic')
        return cannotServe(
          mismatch,
          `namespace ${watched.nameId} is private (basic auth) while this run has no credentials for it, so nothing it fetches there tells which build is served`,
        )
    }
    return undefined
  }
}

function cannotServe(mismatch: Mismatch, why: string): Mismatch {
  return { ...mismatch, permanent: true, cannotServe: why }
}
