// Version routes: create a version, read one, validate a version body, reserve a display name.
// A version is immutable once created.

import type { VersionConfig } from '../matchmaker-config.ts'
import { unstorableRoutes, versionConfigFault, versionProblems } from '../version-rules.ts'
import { requireGame, type ApiContext, type ApiRoute } from '../core.ts'
import { ApiError, internalError, validationError } from '../errors.ts'
import type { GameRecord } from '../state.ts'
import { versionBody } from '../version-body.ts'
import { REGIONS, routesInServiceOrder, storeVersionConfig, versionConfigAnswer } from '../version-config.ts'

/**
 * The body's display name and config, refused as the service refuses it while converting the
 * config (before validation): 500 for a negative route priority or a middleware without a kind,
 * 400 MATCHMAKER_INVALID_VERSION_CONFIG for a negative matchmaker number.
 */
function convertedBody(context: ApiContext): {
  game: GameRecord
  displayName: string
  config: VersionConfig
} {
  const { displayName, config } = versionBody(context.body)
  const game = requireGame(context)
  const fault = versionConfigFault(config)
  if (fault?.code === 'ERROR') throw internalError()
  if (fault) throw new ApiError(fault.code, `Invalid version config: ${fault.message}.`)
  return { game, displayName, config }
}

function problemsOf(game: GameRecord, displayName: string, config: VersionConfig): string[][] {
  const takenDisplayNames = [...game.versions.values()].map((version) => version.displayName)
  return versionProblems({ displayName, config, takenDisplayNames, regions: REGIONS })
}

// POST /cloud/games/{game_id}/versions
export const createGameVersion: ApiRoute = {
  method: 'POST',
  pattern: '/cloud/games/:game_id/versions',
  handle(context) {
    const { game, displayName, config } = convertedBody(context)
    const problems = problemsOf(game, displayName, config)
    if (problems.length > 0) throw validationError(problems)
    const { state } = context.core
    // Preparing the CDN config: the site must exist, be the game's and be completely uploaded.
    const siteId = config.cdn?.site_id
    if (siteId) {
      const site = state.siteById(siteId)
      if (!site || site.gameId !== game.id || !site.completed) throw internalError()
    }
    if (siteId && unstorableRoutes(config).length > 0) {
      // The version and its CDN site are stored, then the routes' insert breaks the table's key
      // (one header per glob): the name stays taken by a version without routes or matchmaker.
      state.createVersion(game, displayName, { cdn: { siteId, routes: [] } })
      throw internalError()
    }
    const stored = storeVersionConfig(config)
    if (stored.cdn) stored.cdn.routes = routesInServiceOrder(stored.cdn.routes, context.core.routeOrder)
    return { version_id: state.createVersion(game, displayName, stored).id }
  },
}

// GET /cloud/games/{game_id}/versions/{version_id}
export const getGameVersionById: ApiRoute = {
  method: 'GET',
  pattern: '/cloud/games/:game_id/versions/:version_id',
  handle(context) {
    const version = requireGame(context).versions.get(context.params.version_id ?? '')
    if (!version) throw internalError()
    return {
      version: {
        version_id: version.id,
        create_ts: version.createTs,
        display_name: version.displayName,
        config: versionConfigAnswer(version.config),
      },
    }
  },
}

// POST /cloud/games/{game_id}/versions/validate
export const validateGameVersion: ApiRoute = {
  method: 'POST',
  pattern: '/cloud/games/:game_id/versions/validate',
  handle(context) {
    const { game, displayName, config } = convertedBody(context)
    return { errors: problemsOf(game, displayName, config).map((path) => ({ path })) }
  },
}

// POST /cloud/games/{game_id}/versions/reserve-name
export const reserveVersionName: ApiRoute = {
  method: 'POST',
  pattern: '/cloud/games/:game_id/versions/reserve-name',
  handle(context) {
    return { version_display_name: context.core.state.reserveVersionName(requireGame(context)) }
  },
}
