// The domain the service serves namespaces under: `cdn-domain` when given, else the service's own, as
// it answers GET /cloud/bootstrap (what the official client reads). A service that names none gets
// no URL rather than a wrong one.

import type { ServiceClient } from '../api/client.ts'
import { ServiceError, UsageError } from '../api/errors.ts'
import type { Logger } from '../common/logger.ts'
import { Input } from '../inputs/constants.ts'
import { inputName } from '../common/input-naming.ts'

/**
 * `given`, else the service's `domains.cdn`: a domain (served over https), or, when the API itself is
 * served over http or on a port of its own (a local or self-hosted service), an origin of that scheme
 * and port, since such a service answers its namespaces' host names where it answers its API.
 * Undefined, with a warning, when the service names none.
 */
export async function resolveCdnDomain(
  client: Pick<ServiceClient, 'bootstrap'>,
  given: string | undefined,
  apiUrl: string,
  logger: Pick<Logger, 'info' | 'warning'>,
): Promise<string | undefined> {
  if (given) return given
  let cdn: string | undefined | null
  try {
    cdn = (await client.bootstrap()).domains?.cdn
  } catch (error) {
    // A service older than the route answers 404: it names no domain.
    if (!(error instanceof ServiceError && error.status === 404)) throw error
  }
  if (!cdn) {
    logger.warning(
      `The service names no CDN domain (GET /cloud/bootstrap has no domains.cdn), so the namespace's URL is unknown ` +
        `and url stays empty. Set ${inputName(Input.CdnDomain)} to the domain the service serves namespaces under`,
    )
    return undefined
  }
  const api = new URL(apiUrl)
  const origin =
    api.protocol === 'https:' && !api.port ? cdn : `${api.protocol}//${cdn}${api.port ? `:${api.port}` : ''}`
  logger.info(`Namespaces are served under ${origin} (the service's CDN domain, from GET /cloud/bootstrap)`)
  return origin
}

/** The host name of a cdn-domain (a domain, or an origin with a scheme and port). */
export function cdnHost(cdnDomain: string): string {
  return cdnDomain.includes('://') ? new URL(cdnDomain).hostname : cdnDomain
}

/**
 * A custom domain under the CDN domain itself (`x.rivet.game`) is refused by the service (400
 * CDN_INVALID_DOMAIN): refused here, before anything is created.
 */
export function checkDomainOutsideCdn(domain: string | undefined, cdnDomain: string | undefined): void {
  if (!domain || !cdnDomain) return
  const host = cdnHost(cdnDomain).toLowerCase()
  if (domain !== host && !domain.endsWith(`.${host}`)) return
  throw new UsageError(
    `${inputName(Input.Domain)} '${domain}' is under the service's CDN domain ${host}, which the service refuses as a custom domain ` +
      `(CDN_INVALID_DOMAIN): the namespace is served under ${host} already. Give a domain of your own, or leave ${inputName(Input.Domain)} empty`,
  )
}
