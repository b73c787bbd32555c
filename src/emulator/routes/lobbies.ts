// GET /cloud/games/{game_id}/namespaces/{namespace_id}/logs/lobbies/{lobby_id}

import { requireGame, type ApiRoute } from '../core.ts'
import { internalError } from '../errors.ts'

export const getNamespaceLobby: ApiRoute = {
  method: 'GET',
  pattern: '/cloud/games/:game_id/namespaces/:namespace_id/logs/lobbies/:lobby_id',
  handle(context) {
    const namespaceId = context.params.namespace_id ?? ''
    const game = requireGame(context)
    const lobby = game.lobbies.find((candidate) => candidate.lobby_id === context.params.lobby_id)
    if (!context.core.state.namespace(game, namespaceId) || !lobby || lobby.namespace_id !== namespaceId) {
      throw internalError()
    }
    // The real shape: metrics beside the lobby. A copy stays inside for clients written from the
    // interface document alone, which puts it there.
    return {
      lobby,
      ...(lobby.metrics === undefined ? {} : { metrics: lobby.metrics }),
      perf_lists: [],
      stdout_presigned_urls: [],
      stderr_presigned_urls: [],
    }
  },
}
