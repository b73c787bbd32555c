// A CDN site is served only once a version whose config names it is published to a namespace.

import type { ServiceClient } from '../../api/client.ts'
import { ServiceError, ServiceStateError, ValidationFailedError } from '../../api/errors.ts'
import { describeValidationPath } from '../../api/rules.ts'
import type { GameVersion, VersionConfig, VersionSummary } from '../../api/types.ts'
import type { CdnRoute } from '../../api/versions.ts'
import type { Logger } from '../../common/logger.ts'
import { Input } from '../../inputs/constants.ts'
import { inputName } from '../../common/input-naming.ts'

const SITE_PLACEHOLDER = '00000000-0000-4000-8000-000000000000'

/**
 * The base config with the new site and `routes` (none keeps the base's). The service answers the
 * matchmaker as `game_modes` and the legacy `lobby_groups`; posted back, `lobby_groups` makes it
 * ignore `game_modes`, so the legacy form is left out whenever the current one is there.
 */
export function deployConfig(
  base: VersionConfig,
  siteId: string,
  routes?: readonly CdnRoute[],
): VersionConfig {
  const { matchmaker, cdn, ...rest } = structuredClone(base)
  const config: VersionConfig = {
    ...rest,
    cdn: { ...cdn, site_id: siteId, ...(routes?.length ? { routes: structuredClone([...routes]) } : {}) },
  }
  if (matchmaker) {
    const { lobby_groups: legacy, ...current } = matchmaker
    config.matchmaker = current.game_modes === undefined ? { ...current, lobby_groups: legacy } : current
  }
  return config
}

/**
 * `{game}--{namespace}.{cdn}` (`prod` at `{game}.{cdn}`), never the custom domain. `cdnDomain` is a
 * domain (https), or an origin with a scheme and port (the emulator).
 */
export function namespaceUrl(cdnDomain: string, gameNameId: string, namespaceNameId: string): string {
  const origin = new URL(cdnDomain.includes('://') ? cdnDomain : `https://${cdnDomain}`)
  const host = namespaceNameId === 'prod' ? gameNameId : `${gameNameId}--${namespaceNameId}`
  return `${origin.protocol}//${host}.${origin.host}/`
}

export async function readVersion(
  client: ServiceClient,
  gameId: string,
  versionId: string,
): Promise<GameVersion> {
  try {
    return (await client.getVersion(gameId, versionId)).version
  } catch (error) {
    if (error instanceof ServiceError && error.status === 500 && error.code === 'ERROR') {
      const message = `${inputName(Input.VersionId)} '${versionId}' is not a version of game ${gameId}`
      throw new ServiceStateError(message, { cause: error })
    }
    throw error
  }
}

/** The newest create_ts; the last listed on a tie. */
export function latestVersion(versions: readonly VersionSummary[]): VersionSummary | undefined {
  let latest: VersionSummary | undefined
  for (const version of versions) {
    if (!latest || Date.parse(version.create_ts) >= Date.parse(latest.create_ts)) latest = version
  }
  return latest
}

/** `wanted` when no version of the game has that name, else a name the service reserves. */
export async function versionName(
  client: ServiceClient,
  gameId: string,
  wanted: string,
  versions: readonly VersionSummary[],
): Promise<string> {
  if (!versions.some((version) => version.display_name === wanted)) return wanted
  return (await client.reserveVersionName(gameId)).version_display_name
}

/** Before anything is created: validation needs only a site_id, so a placeholder stands for the site. */
export async function validateDeployVersion(
  client: ServiceClient,
  gameId: string,
  displayName: string,
  base: VersionConfig,
  routes?: readonly CdnRoute[],
): Promise<void> {
  const answer = await client.validateVersion(gameId, {
    display_name: displayName,
    config: deployConfig(base, SITE_PLACEHOLDER, routes),
  })
  // A name another run took since it was chosen: createVersion takes a reserved one instead.
  const errors = answer.errors.filter(({ path }) => path.join('.') !== 'display-name.not-unique')
  if (errors.length) {
    const described = errors.map(({ path }) => ({ path, description: describeValidationPath(path) }))
    throw new ValidationFailedError('The new version', described)
  }
}

/** A name taken meanwhile by another run is replaced by a reserved one, once. */
export async function createVersion(
  client: ServiceClient,
  gameId: string,
  displayName: string,
  config: VersionConfig,
  logger: Logger,
): Promise<{ versionId: string; displayName: string }> {
  try {
    const { version_id } = await client.createVersion(gameId, { display_name: displayName, config })
    return { versionId: version_id, displayName }
  } catch (error) {
    if (!(error instanceof ServiceError && error.serviceMessage.includes('display-name.not-unique')))
      throw error
    const reserved = (await client.reserveVersionName(gameId)).version_display_name
    logger.info(`Version name '${displayName}' was taken meanwhile: creating it as '${reserved}'`)
    const { version_id } = await client.createVersion(gameId, { display_name: reserved, config })
    return { versionId: version_id, displayName: reserved }
  }
}

/** One per pull request, so a second close finds it live. */
export function closedVersionName(nameId: string, pullRequest: number | undefined): string {
  return pullRequest === undefined ? `${nameId} closed` : `${nameId} closed (#${pullRequest})`
}
