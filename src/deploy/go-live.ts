// The deploy's last stage: the version of the new site made from the planned base version, and
// published to the namespace (or a missing namespace created on it).

import type { ServiceClient } from '../api/client.ts'
import type { Logger } from '../common/logger.ts'
import type { TargetedInputs } from '../inputs/deploy.ts'
import { createNamespaceOn, type Provisioned } from './provision.ts'
import { createVersion, deployConfig, namespaceUrl } from './publish.ts'
import type { PublishPlan } from './target.ts'
import { sameRoutes } from './web-engine.ts'

export interface Published {
  versionId: string
  versionName: string
  /** What the namespace served before; undefined for a namespace this run created. */
  replacedVersionId: string | undefined
  /** False when the namespace already served a version of this site: nothing was created. */
  created: boolean
  /** Where the namespace serves it: the custom domain, else its host name under cdn-domain. */
  url: string
}

export interface WentLive {
  published: Published
  /** What is provisioned now (a namespace created on the new version included). */
  provisioned: Provisioned
}

/**
 * Makes the version of the new site from the base version and publishes it: to the namespace, or as
 * the first version of a namespace this run creates. A namespace that already serves a version of
 * this site (a re-run of an unchanged build) is left as it is.
 */
export async function goLive(
  client: ServiceClient,
  inputs: TargetedInputs,
  plan: PublishPlan,
  provisioned: Provisioned,
  siteId: string,
  logger: Logger,
  onNamespace: (id: string) => void,
): Promise<WentLive> {
  const { gameId } = inputs.connection
  const { cdnDomain, domain } = inputs.target
  const url = namespaceUrl(cdnDomain, plan.gameNameId, provisioned.nameId ?? '', domain)
  const existing = provisioned.namespaceId
  const unchanged = {
    versionId: plan.base.version_id,
    versionName: plan.base.display_name,
    replacedVersionId: plan.current,
    created: false,
    url,
  }
  if (existing && servesAlready(plan, siteId)) {
    logger.info(
      `Namespace ${provisioned.nameId} already serves site ${siteId} (version '${plan.base.display_name}'): nothing to publish`,
    )
    return { published: unchanged, provisioned }
  }
  const config = deployConfig(plan.base.config, siteId, plan.routes)
  const created = await createVersion(client, gameId, plan.name, config, logger)
  logger.info(`Created version '${created.displayName}' (${created.versionId}) with site ${siteId}`)
  let now = provisioned
  if (existing) {
    await client.setNamespaceVersion(gameId, existing, created.versionId)
    logger.info(`Published version '${created.displayName}' to namespace ${provisioned.nameId} (${existing})`)
  } else {
    const version = { id: created.versionId, description: `'${created.displayName}' (${created.versionId})` }
    now = await createNamespaceOn(client, inputs, version, provisioned, logger, onNamespace)
  }
  const published = {
    ...unchanged,
    versionId: created.versionId,
    versionName: created.displayName,
    created: true,
  }
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
