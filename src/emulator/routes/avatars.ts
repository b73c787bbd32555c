// GET /cloud/games/{game_id}/avatars

import { requireGame, type ApiRoute } from '../core.ts'

export const listGameCustomAvatars: ApiRoute = {
  method: 'GET',
  pattern: '/cloud/games/:game_id/avatars',
  handle(context) {
    return { custom_avatars: requireGame(context).avatars }
  },
}
