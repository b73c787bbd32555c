// What every handler works with: the state, the options, the signer and the storage of one emulator.

import type { IncomingMessage } from 'node:http'
import type { CdnConfigs } from './cdn-config.ts'
import type { SeedToken } from './seed.ts'
import type { JsonObject } from './body.ts'
import { internalError } from './errors.ts'
import type { FaultInjector } from './faults.ts'
import type { ResolvedOptions } from './options.ts'
import type { PartSigner } from './presign.ts'
import type { RateLimiter } from './rate-limit.ts'
import type { EmulatorState, GameRecord } from './state.ts'
import type { PartStorage } from './storage.ts'

export interface EmulatorCore {
  /** 'http://host:port', no trailing slash; known once the server listens. */
  baseUrl: string
  /** The object store's origin, 'http://host:port', where presigned URLs point. */
  storeUrl: string
  options: ResolvedOptions
  state: EmulatorState
  signer: PartSigner
  storage: PartStorage
  limiter: RateLimiter
  faults: FaultInjector
  cdn: CdnConfigs
  /** Draws the order of a version's routes when it has more than 10 (seeded: routeOrderSeed). */
  routeOrder: () => number
}

export interface ApiContext {
  core: EmulatorCore
  params: Record<string, string>
  query: URLSearchParams
  body: JsonObject
  token: SeedToken
  req: IncomingMessage
}

export interface ApiRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  /** Literal segments and `:name` parameters, e.g. '/cloud/games/:game_id/avatars'. */
  pattern: string
  /** Answers the JSON body of a 200, or throws an ApiError. */
  handle(context: ApiContext): unknown
}

/** The game of the route's game_id; a game the token names but the seed lacks is an internal error. */
export function requireGame(context: ApiContext): GameRecord {
  const game = context.core.state.game(context.params.game_id ?? '')
  if (!game) throw internalError()
  return game
}
