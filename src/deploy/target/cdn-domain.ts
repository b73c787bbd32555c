import type { ServiceClient } from '../../api/client.ts'
import { ServiceError } from '../../api/errors.ts'
import type { Logger } from '../../common/logger.ts'
import { Input } from '../../inputs/constants.ts'
import { inputName } from '../../common/input-naming.ts'

/**
 * `given`, else GET /cloud/bootstrap's `domains.cdn`: a domain (https), or with an API on http or a
 * port of its own, an origin of that scheme and port. None named: no URL rather than a wrong one.
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
