// Bearer tokens, checked in the real service's order: present, known, not expired, for this game.

import { ApiError } from './errors.ts'
import type { SeedToken } from './seed.ts'
import type { EmulatorState } from './state.ts'

const BEARER = 'Bearer '

export function authenticate(
  state: EmulatorState,
  authorization: string | undefined,
  now: number,
): SeedToken {
  if (authorization === undefined || !authorization.startsWith(BEARER)) {
    throw new ApiError(
      'API_UNAUTHORIZED',
      'No bearer token provided. Make sure your `Authorization` header is properly set.',
    )
  }
  const token = state.token(authorization.slice(BEARER.length))
  if (!token) throw new ApiError('TOKEN_INVALID', 'The bearer token is invalid.')
  if (token.expiresAt !== undefined && token.expiresAt <= now) {
    throw new ApiError('CLAIMS_ENTITLEMENT_EXPIRED', 'The bearer token has expired.')
  }
  return token
}

export function authorizeGame(token: SeedToken, gameId: string): void {
  if (!token.gameIds.includes(gameId)) {
    throw new ApiError('API_FORBIDDEN', `The bearer token does not grant access to game "${gameId}".`)
  }
}
