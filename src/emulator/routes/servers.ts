// GET /games/{game_id}/environments/{environment_id}/servers

import type { Server } from '../../api/types.ts'
import { isJsonObject } from '../body.ts'
import { requireGame, type ApiRoute } from '../core.ts'
import { badQueryParameter, internalError } from '../errors.ts'

const MAX_TAGS = 8
const TAG_KEY_MAX_BYTES = 32
const TAG_VALUE_MAX_BYTES = 1024

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
      const position = newestFirst.findIndex((server) => server.id === cursor)
      if (position < 0) throw internalError()
      newestFirst = newestFirst.slice(position + 1)
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
  return b.created_at - a.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
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
  if (!isJsonObject(tags)) throw badQueryParameter('tags_json', 'expected a JSON object of string to string')
  const entries = Object.entries(tags)
  if (entries.length > MAX_TAGS) throw badQueryParameter('tags_json', `at most ${MAX_TAGS} tags are allowed`)
  const result: Record<string, string> = {}
  for (const [key, value] of entries) {
    if (typeof value !== 'string')
      throw badQueryParameter('tags_json', `the value of tag "${key}" is not a string`)
    if (!bytesBetween(key, 1, TAG_KEY_MAX_BYTES)) {
      throw badQueryParameter('tags_json', `tag keys must be 1 to ${TAG_KEY_MAX_BYTES} bytes`)
    }
    if (!bytesBetween(value, 1, TAG_VALUE_MAX_BYTES)) {
      throw badQueryParameter('tags_json', `tag values must be 1 to ${TAG_VALUE_MAX_BYTES} bytes`)
    }
    result[key] = value
  }
  return result
}

function bytesBetween(text: string, min: number, max: number): boolean {
  const bytes = Buffer.byteLength(text, 'utf8')
  return bytes >= min && bytes <= max
}
