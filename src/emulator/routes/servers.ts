// GET /games/{game_id}/environments/{environment_id}/servers

import { serverTagsProblem } from '../../api/rules.ts'
import type { Server } from '../../api/types.ts'
import { requireGame, type ApiRoute } from '../core.ts'
import { badQueryParameter, internalError } from '../errors.ts'

export const listServers: ApiRoute = {
  method: 'GET',
  pattern: '/games/:game_id/environments/:environment_id/servers',
  handle(context) {
    const includeDestroyed = parseIncludeDestroyed(context.query.get('include_destroyed'))
    const tags = parseTags(context.query.get('tags_json'))
    const cursor = context.query.get('cursor')
    const servers = requireGame(context).environments.get(context.params.environment_id ?? '')
    if (!servers) throw internalError()

    let newestFirst = [...servers].sort(byNewest)
    if (cursor !== null) {
      // A cursor naming no server gives an empty page, as on the real service.
      const position = newestFirst.findIndex((server) => server.id === cursor)
      newestFirst = position < 0 ? [] : newestFirst.slice(position + 1)
    }
    const matching = newestFirst.filter(
      (server) => (includeDestroyed || server.destroyed_at === undefined) && hasTags(server, tags),
    )
    // Only the listing with destroyed servers is paged; a short page means the end.
    const page = includeDestroyed ? matching.slice(0, context.core.options.serversPageSize) : matching
    return { servers: page }
  },
}

function byNewest(a: Server, b: Server): number {
  return b.created_at - a.created_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)
}

function hasTags(server: Server, tags: Record<string, string>): boolean {
  return Object.entries(tags).every(([key, value]) => server.tags[key] === value)
}

function parseIncludeDestroyed(value: string | null): boolean {
  if (value === null || value === 'false') return false
  if (value === 'true') return true
  throw badQueryParameter('include_destroyed', 'expected "true" or "false"')
}

function parseTags(json: string | null): Record<string, string> {
  if (json === null) return {}
  let tags: unknown
  try {
    tags = JSON.parse(json)
  } catch {
    throw badQueryParameter('tags_json', 'not valid JSON')
  }
  const problem = serverTagsProblem(tags)
  if (problem) throw badQueryParameter('tags_json', problem)
  return tags as Record<string, string>
}
