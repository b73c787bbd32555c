// GET /cloud/games/{game_id}/avatars

import { requireGame, type ApiRoute } from '../core.ts'

export const listGameCustomAvatars: ApiRoute = {
  method: 'GET',
  pattern: '/cloud/games/:game_id/avatars',
  handle(context) {
    // Newest first, as the real service lists them.
    const avatars = [...requireGame(context).avatars].sort(
      (a, b) => Date.parse(b.create_ts) - Date.parse(a.create_ts),
    )
    return { custom_avatars: avatars }
  },
}
