import type { ServiceClient } from '../../api/client.ts'
import type { Logger } from '../../common/logger.ts'
import { Input } from '../../inputs/constants.ts'
import type { TargetedInputs } from '../../inputs/deploy.ts'
import { makePrivate, makePublic, readAccess, type WaitUntilPrivate } from '../target/private.ts'
import { createNamespaceOn, type Provisioned } from '../target/provision.ts'
import { createVersion, deployConfig, namespaceUrl } from './version-config.ts'
import type { PublishPlan } from '../target/target.ts'
import { sameRoutes } from '../collect/web-engine.ts'
import { inputName } from '../../common/input-naming.ts'

export interface Published {
  versionId: string
  versionName: string
  /** Undefined for a namespace this run created. */
  replacedVersionId: string | undefined
  /** False when the namespace already served a version of this site. */
  created: boolean
  /** The namespace's own host, never the custom domain; undefined when no CDN domain is known. */
  url: string | undefined
  domain: PublishedDomain | undefined
  /** basic-auth's user; undefined when public. */
  privateUser?: string
}

export interface PublishedDomain {
  name: string
  /** `active`, `pending` (until its CNAME record exists), `failed` or `unknown`. */
  status: string
  url: string
  cnameTarget: string | undefined
}

interface PreparedVersion {
  published: Published
  provisioned: Provisioned
  namespaceId: string
  alreadyServed: boolean
}

/** For publishAndSee to publish; a missing namespace is created on the base version first. */
export async function prepareVersion(
  client: ServiceClient,
  inputs: TargetedInputs,
  plan: PublishPlan,
  provisioned: Provisioned,
  siteId: string,
  logger: Logger,
  onNamespace: (id: string) => void,
  waitUntilPrivate: WaitUntilPrivate,
): Promise<PreparedVersion> {
  const { gameId } = inputs.connection
  const { basicAuth } = inputs.target
  const url = plan.cdnDomain && namespaceUrl(plan.cdnDomain, plan.gameNameId, provisioned.nameId ?? '')
  const existing = provisioned.namespaceId
  const unchanged: Published = {
    versionId: plan.base.version_id,
    versionName: plan.base.display_name,
    replacedVersionId: plan.current,
    created: false,
    url,
    domain: publishedDomain(provisioned, url),
    privateUser: basicAuth?.user,
  }
  const access = (namespaceId: string) => ({
    client,
    gameId,
    namespaceId,
    nameId: provisioned.nameId,
    logger,
  })
  const privateAt = (): string => {
    if (url) return url
    // planTarget refuses basic-auth without a CDN domain before anything is created.
    throw new Error('the namespace cannot be seen to be private: its URL is unknown')
  }
  if (existing) {
    const before = await readAccess(client, gameId, existing)
    if (basicAuth) await makePrivate(access(existing), basicAuth, before, privateAt(), waitUntilPrivate)
    else if (before.authType === 'basic') await makePublic(access(existing), before)
  }
  const servesAlready =
    plan.current === plan.base.version_id &&
    plan.base.config.cdn?.site_id === siteId &&
    (!plan.routes || sameRoutes(plan.base.config.cdn.routes, plan.routes))
  if (existing && servesAlready) {
    logger.info(
      `Namespace ${provisioned.nameId} already serves site ${siteId} (version '${plan.base.display_name}'): nothing to publish`,
    )
    logWhere(unchanged, logger)
    return { published: unchanged, provisioned, namespaceId: existing, alreadyServed: true }
  }
  const config = deployConfig(plan.base.config, siteId, plan.routes)
  const created = await createVersion(client, gameId, plan.name, config, logger)
  logger.info(`Created version '${created.displayName}' (${created.versionId}) with site ${siteId}`)
  const now = existing
    ? { ...provisioned, namespaceId: existing }
    : await createNamespaceOn(client, inputs, plan.createOn, provisioned, logger, onNamespace)
  // A new namespace serves the base version, publicly: it is made private before the publish.
  if (!existing && basicAuth)
    await makePrivate(access(now.namespaceId), basicAuth, undefined, privateAt(), waitUntilPrivate)
  const published: Published = {
    ...unchanged,
    versionId: created.versionId,
    versionName: created.displayName,
    created: true,
    domain: publishedDomain(now, url),
  }
  logWhere(published, logger)
  return { published, provisioned: now, namespaceId: now.namespaceId, alreadyServed: false }
}

function publishedDomain(provisioned: Provisioned, url: string | undefined): PublishedDomain | undefined {
  const { domain, domainStatus } = provisioned
  if (!domain) return undefined
  return {
    name: domain,
    status: domainStatus?.status ?? 'unknown',
    url: `https://${domain}/`,
    cnameTarget: domainStatus?.cnameRecord ?? (url && new URL(url).hostname),
  }
}

/** The URL is said live only once seen (publish-and-see.ts); a custom domain's state is said now. */
function logWhere(published: Published, logger: Logger): void {
  const { domain, url } = published
  if (!url)
    logger.warning(
      `Published, but its URL is unknown: the service names no CDN domain. Set ${inputName(Input.CdnDomain)} to the domain it serves namespaces under`,
    )
  if (domain?.status === 'active')
    logger.info(`Custom domain ${domain.url} is active: it serves what the namespace's own host serves`)
  else if (domain?.status === 'pending')
    logger.info(
      `Domain ${domain.name} is pending: create a CNAME record ${domain.name} → ${domain.cnameTarget ?? "the namespace's host name"}; ` +
        'it serves the build once the service sees it (then its certificate is issued)',
    )
  else if (domain)
    logger.info(
      `Domain ${domain.name} is ${domain.status}: it does not serve the build; the namespace's own host does`,
    )
}
