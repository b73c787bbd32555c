// GET /cloud/games/{game_id}: the game with its namespaces and versions (what a get-or-create reads).

import { requireGame, type ApiRoute } from '../core.ts'
import { namespaceSummary } from './namespaces.ts'

export const getGameById: ApiRoute = {
  method: 'GET',
  pattern: '/cloud/games/:game_id',
  handle(context) {
    const game = requireGame(context)
    const versions = [...game.versions.values()]
    return {
      game: {
        game_id: game.id,
        create_ts: versions[0]?.createTs ?? new Date(0).toISOString(),
        name_id: game.nameId,
        display_name: game.displayName,
        developer_group_id: game.id,
        total_player_count: 0,
        namespaces: game.namespaces.map(namespaceSummary),
        versions: versions.map((version) => ({
          version_id: version.id,
          create_ts: version.createTs,
          display_name: version.displayName,
        })),
        available_regions: [],
      },
      watch: { index: String(context.core.options.now()) },
    }
  },
}
