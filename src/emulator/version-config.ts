// What the emulator keeps of a version's config, and the config it answers when a version is read:
// the CDN site with the routes the service stores (one header each), the matchmaker as lobby groups,
// answered both as `game_modes` and as the legacy `lobby_groups`. No `kv`, `identity` or `engine`.

import {
  CDN_SERVED_MAX,
  globToString,
  parseGlob,
  type CdnHeader,
  type CdnVersionConfig,
} from '../api/versions.ts'
import type {
  Captcha,
  GameMode,
  LobbyGroup,
  MatchmakerVersionConfig,
  VersionConfig,
} from './matchmaker-config.ts'
import { lobbyGroupsOf, routeHeaders, type LobbyGroupSpec } from './version-rules.ts'

/** A route as the service stores it: its glob (as the service writes it back), priority and header. */
export interface StoredRoute {
  glob: string
  priority: number
  headers: CdnHeader[]
}

export interface StoredLobbyGroup extends Omit<LobbyGroupSpec, 'regions'> {
  regions: Array<{
    region_id: string
    name_id: string
    tier_name_id: string
    idle_lobbies?: { min_idle_lobbies: number; max_idle_lobbies: number }
  }>
}

export interface StoredVersionConfig {
  cdn?: { siteId: string; routes: StoredRoute[] }
  matchmaker?: { lobbyGroups: StoredLobbyGroup[]; captcha?: Captcha }
}

/** The regions the emulator's service knows (the seed's servers and lobbies are in them). */
export const REGIONS: ReadonlyArray<{ name_id: string; region_id: string }> = [
  { name_id: 'eu-fra', region_id: '0c2a5e7b-3d4f-4a61-9b8c-1e2f3a4b5c01' },
  { name_id: 'eu-ams', region_id: '0c2a5e7b-3d4f-4a61-9b8c-1e2f3a4b5c02' },
  { name_id: 'us-nyc', region_id: '0c2a5e7b-3d4f-4a61-9b8c-1e2f3a4b5c03' },
  { name_id: 'us-sfo', region_id: '0c2a5e7b-3d4f-4a61-9b8c-1e2f3a4b5c04' },
]

/** What the service answers for a region id it does not know. */
const UNKNOWN_REGION = 'unknown'

/**
 * The stored form of a config that passed validation (so its lobby groups convert and name known
 * regions). Only routes with exactly one header are stored; the caller refuses the others first.
 */
export function storeVersionConfig(config: VersionConfig): StoredVersionConfig {
  const stored: StoredVersionConfig = {}
  if (config.cdn?.site_id) stored.cdn = { siteId: config.cdn.site_id, routes: storedRoutes(config.cdn) }
  if (config.matchmaker) stored.matchmaker = storedMatchmaker(config.matchmaker)
  return stored
}

/**
 * The routes in the order the service reads them back: from an unordered map, so with more than the
 * CDN_SERVED_MAX (10) the CDN reads, which ones it serves is arbitrary. More than 10 are shuffled with
 * `random`, and never so that the first 10 given stay the first 10: a client that counts on order
 * is caught. 10 or fewer keep their order.
 */
export function routesInServiceOrder<R>(routes: readonly R[], random: () => number): R[] {
  const shuffled = [...routes]
  if (shuffled.length <= CDN_SERVED_MAX) return shuffled
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[shuffled[i], shuffled[j]] = [shuffled[j] as R, shuffled[i] as R]
  }
  const firstGiven = new Set(routes.slice(0, CDN_SERVED_MAX))
  if (shuffled.slice(0, CDN_SERVED_MAX).every((route) => firstGiven.has(route))) {
    // Swap one of the routes given after the 10th into the served ones.
    const late = shuffled.findIndex((route) => !firstGiven.has(route))
    const early = Math.floor(random() * CDN_SERVED_MAX)
    ;[shuffled[early], shuffled[late]] = [shuffled[late] as R, shuffled[early] as R]
  }
  return shuffled
}

function storedRoutes(cdn: CdnVersionConfig): StoredRoute[] {
  return (cdn.routes ?? []).flatMap((route) => {
    const headers = routeHeaders(route)
    const tokens = parseGlob(route.glob)
    if (headers.length === 0 || !tokens) return []
    return [{ glob: globToString(tokens), priority: route.priority, headers: headers.map((h) => ({ ...h })) }]
  })
}

function storedMatchmaker(matchmaker: MatchmakerVersionConfig): StoredVersionConfig['matchmaker'] {
  const converted = lobbyGroupsOf(matchmaker)
  if ('fault' in converted)
    throw new Error(`a version config with a fault cannot be stored: ${converted.fault.code}`)
  const lobbyGroups = converted.groups.map((group): StoredLobbyGroup => ({
    ...structuredClone(group),
    regions: group.regions.map(({ region, ...rest }) => {
      const known = REGIONS.find((candidate) =>
        'name_id' in region ? candidate.name_id === region.name_id : candidate.region_id === region.region_id,
      )
      return {
        region_id: known?.region_id ?? ('region_id' in region ? region.region_id : ''),
        name_id: known?.name_id ?? UNKNOWN_REGION,
        ...structuredClone(rest),
      }
    }),
  }))
  return { lobbyGroups, ...(matchmaker.captcha ? { captcha: structuredClone(matchmaker.captcha) } : {}) }
}

/** The config a version read answers. */
export function versionConfigAnswer(stored: StoredVersionConfig): VersionConfig {
  const answer: VersionConfig = {}
  if (stored.cdn) {
    answer.cdn = {
      site_id: stored.cdn.siteId,
      routes: stored.cdn.routes.map((route) => ({
        glob: route.glob,
        priority: route.priority,
        middlewares: [{ kind: { custom_headers: { headers: route.headers.map((h) => ({ ...h })) } } }],
      })),
    }
  }
  if (stored.matchmaker) {
    const { lobbyGroups, captcha } = stored.matchmaker
    answer.matchmaker = {
      game_modes: Object.fromEntries(lobbyGroups.map((group) => [group.name_id, gameModeAnswer(group)])),
      ...(captcha ? { captcha: structuredClone(captcha) } : {}),
      lobby_groups: lobbyGroups.map(lobbyGroupAnswer),
    }
  }
  return answer
}

function gameModeAnswer(group: StoredLobbyGroup): GameMode {
  const docker = group.runtime?.docker
  return {
    regions: Object.fromEntries(
      group.regions.map((region) => [
        region.name_id,
        {
          tier: region.tier_name_id,
          ...(region.idle_lobbies
            ? {
                idle_lobbies: {
                  min: region.idle_lobbies.min_idle_lobbies,
                  max: region.idle_lobbies.max_idle_lobbies,
                },
              }
            : {}),
        },
      ]),
    ),
    max_players: group.max_players_normal,
    max_players_direct: group.max_players_direct,
    max_players_party: group.max_players_party,
    listable: group.listable,
    taggable: group.taggable,
    allow_dynamic_max_players: group.allow_dynamic_max_players,
    ...(docker
      ? {
          docker: {
            ...(docker.build_id ? { image_id: docker.build_id } : {}),
            args: [...docker.args],
            env: Object.fromEntries(docker.env_vars.map(({ key, value }) => [key, value])),
            network_mode: docker.network_mode,
            ports: Object.fromEntries(
              docker.ports.map((port) => [
                port.label,
                {
                  ...(port.target_port === undefined ? {} : { port: port.target_port }),
                  ...(port.port_range ? { port_range: { ...port.port_range } } : {}),
                  protocol: port.proxy_protocol,
                  proxy: port.proxy_kind,
                },
              ]),
            ),
          },
        }
      : {}),
    ...(group.actions ? { actions: structuredClone(group.actions) } : {}),
  }
}

function lobbyGroupAnswer(group: StoredLobbyGroup): LobbyGroup {
  const docker = group.runtime?.docker
  return {
    name_id: group.name_id,
    regions: group.regions.map((region) => ({
      region_id: region.region_id,
      tier_name_id: region.tier_name_id,
      ...(region.idle_lobbies ? { idle_lobbies: { ...region.idle_lobbies } } : {}),
    })),
    max_players_normal: group.max_players_normal,
    max_players_direct: group.max_players_direct,
    max_players_party: group.max_players_party,
    runtime: docker
      ? {
          docker: {
            ...(docker.build_id ? { build_id: docker.build_id } : {}),
            args: [...docker.args],
            env_vars: docker.env_vars.map(({ key, value }) => ({ key, value })),
            network_mode: docker.network_mode,
            ports: docker.ports.map((port) => ({
              label: port.label,
              ...(port.target_port === undefined ? {} : { target_port: port.target_port }),
              ...(port.port_range ? { port_range: { ...port.port_range } } : {}),
              proxy_protocol: port.proxy_protocol,
            })),
          },
        }
      : {},
  }
}
