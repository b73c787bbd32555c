// The deploy's last stage: the version of the new site made from the planned base version, and
// published to the namespace (a missing namespace created first, on the base version).

import type { ServiceClient } from '../api/client.ts'
import type { Logger } from '../common/logger.ts'
import { Input } from '../inputs/constants.ts'
import type { TargetedInputs } from '../inputs/deploy.ts'
import { makePrivate, makePublic, readAccess, type AccessTarget, type WaitUntilPrivate } from './private.ts'
import { createNamespaceOn, type Provisioned } from './provision.ts'
import { createVersion, deployConfig, namespaceUrl } from './publish.ts'
import type { PublishPlan } from './target.ts'
import { sameRoutes } from './web-engine.ts'
import { inputName } from '../common/input-naming.ts'

export interface Published {
  versionId: string
  versionName: string
  /** What the namespace served before; undefined for a namespace this run created. */
  replacedVersionId: string | undefined
  /** False when the namespace already served a version of this site: nothing was created. */
  created: boolean
  /**
   * The namespace's own host name under the CDN domain, never the custom domain (see namespaceUrl);
   * undefined when the service names no CDN domain and cdn-domain is empty.
   */
  url: string | undefined
  /** The custom domain, its state, and the CNAME record it needs to serve; undefined without one. */
  domain: PublishedDomain | undefined
  /** The user whose password the namespace's hosts ask for (basic-auth); undefined when it is public. */
  privateUser?: string
}

export interface PublishedDomain {
  name: string
  /** `active` (it serves the build), `pending` (until its CNAME record exists), `failed` or `unknown`. */
  status: string
  /** `https://<domain>/`: where it serves once active. */
  url: string
  /** What its CNAME record points at: the service's cname_record, else the namespace's host name. */
  cnameTarget: string | undefined
}

export interface WentLive {
  published: Published
  /** What is provisioned now (a namespace created on the new version included). */
  provisioned: Provisioned
}

/**
 * Makes the version of the new site from the base version and publishes it to the namespace; a
 * namespace the game does not have is created on the base version first, then published to like any
 * other (see createNamespaceOn). A namespace that already serves a version of this site (a re-run of
 * an unchanged build) is left as it is.
 */
export async function goLive(
  client: ServiceClient,
  inputs: TargetedInputs,
  plan: PublishPlan,
  provisioned: Provisioned,
  siteId: string,
  logger: Logger,
  onNamespace: (id: string) => void,
  waitUntilPrivate: WaitUntilPrivate,
): Promise<WentLive> {
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
  const access = (namespaceId: string): AccessTarget => ({
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
  if (existing && servesAlready(plan, siteId)) {
    logger.info(
      `Namespace ${provisioned.nameId} already serves site ${siteId} (version '${plan.base.display_name}'): nothing to publish`,
    )
    logWhere(unchanged, logger)
    return { published: unchanged, provisioned }
  }
  const config = deployConfig(plan.base.config, siteId, plan.routes)
  const created = await createVersion(client, gameId, plan.name, config, logger)
  logger.info(`Created version '${created.displayName}' (${created.versionId}) with site ${siteId}`)
  let now = provisioned
  let namespaceId = existing
  if (!namespaceId) {
    const made = await createNamespaceOn(client, inputs, plan.createOn, provisioned, logger, onNamespace)
    ;({ namespaceId } = made)
    now = made
    // A new namespace serves the base version, publicly: it is made private before the publish.
    if (basicAuth) await makePrivate(access(namespaceId), basicAuth, undefined, privateAt(), waitUntilPrivate)
  }
  await client.setNamespaceVersion(gameId, namespaceId, created.versionId)
  logger.info(`Published version '${created.displayName}' to namespace ${now.nameId} (${namespaceId})`)
  const published: Published = {
    ...unchanged,
    versionId: created.versionId,
    versionName: created.displayName,
    created: true,
    domain: publishedDomain(now, url),
  }
  logWhere(published, logger)
  return { published, provisioned: now }
}

/** The namespace serves the base version, and it is of this site with the same routes. */
function servesAlready(plan: PublishPlan, siteId: string): boolean {
  return (
    plan.current === plan.base.version_id &&
    plan.base.config.cdn?.site_id === siteId &&
    (!plan.routes || sameRoutes(plan.base.config.cdn.routes, plan.routes))
  )
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

/**
 * Where the build is served, before it is seen there: the URL is said live only once the deploy has
 * fetched it (verify.ts). A custom domain's state is said now.
 */
function logWhere(published: Published, logger: Logger): void {
  const { domain, url } = published
  if (!url)
    logger.warning(
      `Published, but its URL is unknown: the service names no CDN domain. Set ${inputName(Input.CdnDomain)} to the domain it serves namespaces under`,
    )
  if (!domain) return
  logger.info(
    domain.status === 'active'
      ? `Custom domain ${domain.url} is active: it serves what the namespace's own host serves`
      : domainLine(domain),
  )
}

/** What a custom domain that is not active yet needs, in one line. */
export function domainLine(domain: PublishedDomain): string {
  if (domain.status === 'pending') {
    return (
      `Domain ${domain.name} is pending: create a CNAME record ${domain.name} → ${domain.cnameTarget ?? "the namespace's host name"}; ` +
      'it serves the build once the service sees it (then its certificate is issued)'
    )
  }
  return `Domain ${domain.name} is ${domain.status}: it does not serve the build; the namespace's own host does`
}
