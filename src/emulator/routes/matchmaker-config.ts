// POST /cloud/games/{game_id}/namespaces/{namespace_id}/mm-config/validate

import { isI32, matchmakerConfigProblems } from '../../api/rules.ts'
import { numberField } from '../body.ts'
import { requireGame, type ApiRoute } from '../core.ts'
import { ApiError, badBody, internalError } from '../errors.ts'

export const validateMatchmakerConfig: ApiRoute = {
  method: 'POST',
  pattern: '/cloud/games/:game_id/namespaces/:namespace_id/mm-config/validate',
  handle(context) {
    const lobbyCountMax = numberField(context.body, 'lobby_count_max')
    const maxPlayers = numberField(context.body, 'max_players')
    requireI32('lobby_count_max', lobbyCountMax)
    requireI32('max_players', maxPlayers)
    requireNonNegative('lobby_count_max', lobbyCountMax)
    requireNonNegative('max_players', maxPlayers)
    const namespace = context.core.state.namespace(requireGame(context), context.params.namespace_id ?? '')
    if (!namespace) throw internalError()
    return { errors: matchmakerConfigProblems(lobbyCountMax, maxPlayers).map((path) => ({ path })) }
  },
}

/** The body's numbers are signed 32-bit: one that is not does not parse at all. */
function requireI32(field: string, value: number): void {
  if (!isI32(value)) throw badBody(`"${field}" must be a signed 32-bit integer`)
}

function requireNonNegative(field: string, value: number): void {
  if (value >= 0) return
  throw new ApiError(
    'CLOUD_INVALID_CONFIG',
    `The given config was invalid: ${field} must not be negative, got ${String(value)}.`,
  )
}
