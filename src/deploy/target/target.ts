// The deploy's second stage: the namespace found (or planned), and the new version validated with the
// service. Nothing the upload needs is decided after this.

import type { ServiceClient } from '../../api/client.ts'
import { UsageError } from '../../api/errors.ts'
import { plural } from '../../common/format.ts'
import type { GameVersion, GetGameResponse } from '../../api/types.ts'
import type { CdnRoute } from '../../api/versions.ts'
import type { Logger } from '../../common/logger.ts'
import { Input } from '../../inputs/constants.ts'
import type { TargetedInputs } from '../../inputs/deploy.ts'
import { checkDomainOutsideCdn } from '../../inputs/common.ts'
import { resolveCdnDomain } from './cdn-domain.ts'
import { chooseVersion, provision, type Provisioned } from './provision.ts'
import { readVersion, validateDeployVersion, versionName } from '../live/version-config.ts'
import { inputName } from '../../common/input-naming.ts'

type Game = GetGameResponse['game']

export interface PublishPlan {
  /** The version whose config the new one is made from. */
  base: GameVersion
  name: string
  gameNameId: string
  /** Undefined when the namespace does not exist yet. */
  current: string | undefined
  createOn: { id: string; description: string }
  /** Undefined keeps the base version's. */
  routes: CdnRoute[] | undefined
  /** cdn-domain, else the service's own. */
  cdnDomain: string | undefined
  /** Its namespaces and versions as read before anything changed (reviewed.ts looks for this build there). */
  game: Pick<Game, 'name_id' | 'namespaces' | 'versions'>
}

export async function planTarget(
  client: ServiceClient,
  inputs: TargetedInputs,
  routes: CdnRoute[] | undefined,
  logger: Logger,
  onNamespace: (namespaceId: string) => void,
): Promise<{ provisioned: Provisioned; publishing: PublishPlan | undefined }> {
  const { target } = inputs
  const { gameId, apiUrl } = inputs.connection
  let cdnDomain: string | undefined
  const { provisioned, located } = await provision(client, inputs, logger, {
    onNamespace,
    createLater: target.publish,
    // Known before anything is created: a domain under it is refused by the service.
    beforeChanges: async () => {
      if (!target.publish && !target.domain) return
      cdnDomain = await resolveCdnDomain(client, target.cdnDomain, apiUrl, logger)
      checkDomainOutsideCdn(target.domain, cdnDomain)
      if (target.basicAuth && !cdnDomain) {
        throw new UsageError(
          `${inputName(Input.BasicAuth)}: the namespace's host must be seen answering 401 before the build is published, ` +
            `and the service names no CDN domain: set ${inputName(Input.CdnDomain)} to the domain it serves namespaces under`,
        )
      }
    },
  })
  if (!target.publish) return { provisioned, publishing: undefined }
  const { namespace, game } = located
  const choice = namespace
    ? {
        id: target.versionId ?? namespace.version_id,
        description: target.versionId ?? `${namespace.version_id} (what the namespace serves)`,
      }
    : chooseVersion(inputs, game)
  const base = await readVersion(client, gameId, choice.id)
  const name = await versionName(client, gameId, inputs.site.name, game.versions)
  await validateDeployVersion(client, gameId, name, base.config, routes)
  logger.info(
    `The new version '${name}' will be made from version '${base.display_name}' (${base.version_id}), ` +
      `its config kept but for the site${routes ? ' and the routes' : ''}`,
  )
  if (!namespace) {
    logger.info(
      `Namespace ${provisioned.nameId} does not exist: after the upload it is created on version ${choice.description}, ` +
        'and the new version is published to it',
    )
  }
  logger.info(routesLine(base, routes))
  const current = namespace?.version_id
  return {
    provisioned,
    publishing: { base, name, gameNameId: game.name_id, current, createOn: choice, routes, cdnDomain, game },
  }
}

function routesLine(base: GameVersion, routes: CdnRoute[] | undefined): string {
  const baseRoutes = base.config.cdn?.routes ?? []
  const had = plural(baseRoutes.length, 'route')
  return routes
    ? `Its routes are exactly the ${routes.length} above (${routes.map((r) => r.glob).join(', ')}), in place of the base version's ${had}`
    : `No routes computed (no web engine's needs, no ${inputName(Input.Headers)}): it keeps the base version's ${had}`
}
