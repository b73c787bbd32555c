// POST /cloud/games/{game_id}/namespaces/{namespace_id}/mm-config/validate

import { isU32, matchmakerConfigProblems } from '../../api/rules.ts'
import { numberField } from '../body.ts'
import { requireGame, type ApiRoute } from '../core.ts'
import { ApiError, internalError } from '../errors.ts'

export const validateMatchmakerConfig: ApiRoute = {
  method: 'POST',
  pattern: '/cloud/games/:game_id/namespaces/:namespace_id/mm-config/validate',
  handle(context) {
    const lobbyCountMax = numberField(context.body, 'lobby_count_max')
    const maxPlayers = numberField(context.body, 'max_players')
    requireU32('lobby_count_max', lobbyCountMax)
    requireU32('max_players', maxPlayers)
    const namespace = context.core.state.namespace(requireGame(context), context.params.namespace_id ?? '')
    if (!namespace) throw internalError()
    return { errors: matchmakerConfigProblems(lobbyCountMax, maxPlayers).map((path) => ({ path })) }
  },
}

function requireU32(field: string, value: number): void {
  if (isU32(value)) return
  throw new ApiError(
    'CLOUD_INVALID_CONFIG',
    `The given config was invalid: ${field} must be an unsigned 32-bit integer, got ${String(value)}.`,
  )
}
