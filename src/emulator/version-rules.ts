// The rules of game versions the emulator enforces, read from the service's source: what a version
// config turns into, which error paths its validation reports, what storage refuses, and which CDN
// route applies to a path. Pure.

import { DISPLAY_NAME_MAX_BYTES, displayNameProblems } from '../api/rules.ts'
import {
  CDN_HEADER_NAME_MAX_BYTES,
  CDN_HEADER_VALUE_MAX_BYTES,
  CDN_PRIORITY_MAX,
  CDN_SERVED_MAX,
  globMatches,
  globToString,
  parseGlob,
  type CdnHeader,
  type CdnRoute,
  type CdnVersionConfig,
} from '../api/versions.ts'
import type {
  GameMode,
  GameModeActionConfig,
  IdentityRequirement,
  LobbyGroup,
  MatchmakerVersionConfig,
  NetworkMode,
  PortProtocol,
  PortRange,
  ProxyKind,
  Verification,
  VersionConfig,
} from './matchmaker-config.ts'

const CDN_ROUTES_MAX = 32
const CDN_MIDDLEWARES_MAX = 32
/** custom_headers middlewares a route may have before the next one is `not-unique`. */
const CDN_CUSTOM_HEADERS_MIDDLEWARES_MAX = 2
const CDN_HEADERS_MAX = 32
const GAME_MODES_MAX = 32
const GAME_MODE_MAX_PLAYERS = 256
/** What the service fills in for a game mode that names no max_players, and no tier. */
const DEFAULT_MAX_PLAYERS = 32
const DEFAULT_TIER = 'basic-1d1'
const REGIONS_CHECKED = 64

/**
 * The route the CDN applies to a request path: of the first 10 routes, the highest-priority one whose
 * glob matches (the first of equals). The path is the one requested, before `index.html` is added.
 */
export function routeForPath<R extends { glob: string; priority: number }>(
  routes: readonly R[],
  path: string,
): R | undefined {
  let chosen: R | undefined
  for (const route of routes.slice(0, CDN_SERVED_MAX)) {
    if ((chosen === undefined || route.priority > chosen.priority) && globMatches(route.glob, path)) {
      chosen = route
    }
  }
  return chosen
}

/** Every header a route's custom_headers middlewares add, in order. */
export function routeHeaders(route: CdnRoute): CdnHeader[] {
  return route.middlewares.flatMap((middleware) => middleware.kind.custom_headers?.headers ?? [])
}

/**
 * Indices of the routes the service cannot store: its table holds one header per version and glob,
 * so a route with two or more headers (in one middleware or several) passes validation but fails the
 * creation with a 500, after the version's name was taken; so does a `custom_headers` middleware with
 * no header. A route without middlewares is not stored at all (it is not answered when the version
 * is read).
 */
export function unstorableRoutes(config: { cdn?: { routes?: readonly CdnRoute[] | null } | null }): number[] {
  return (config.cdn?.routes ?? []).flatMap((route, index) => {
    const emptyHeaders = route.middlewares.some((m) => m.kind.custom_headers?.headers.length === 0)
    return routeHeaders(route).length > 1 || emptyHeaders ? [index] : []
  })
}

// The matchmaker, as the service turns a config into its lobby groups.

/** A region of a lobby group: by name (from game_modes) or by id (from legacy lobby_groups). */
export type RegionRef = { name_id: string } | { region_id: string }

export interface LobbyGroupSpec {
  name_id: string
  regions: Array<{
    region: RegionRef
    tier_name_id: string
    idle_lobbies?: { min_idle_lobbies: number; max_idle_lobbies: number }
  }>
  max_players_normal: number
  max_players_direct: number
  max_players_party: number
  listable: boolean
  taggable: boolean
  allow_dynamic_max_players: boolean
  runtime?: {
    docker?: {
      build_id?: string
      args: string[]
      env_vars: Array<{ key: string; value: string }>
      network_mode: NetworkMode
      ports: Array<{
        label: string
        target_port?: number
        port_range?: PortRange
        proxy_protocol: PortProtocol
        proxy_kind: ProxyKind
      }>
    }
  }
  actions?: { find?: ActionSpec; join?: ActionSpec; create?: CreateActionSpec }
}

/** A game mode's find, join or create action, with the service's defaults filled in. */
export interface ActionSpec {
  enabled: boolean
  identity_requirement: IdentityRequirement
  verification?: Verification
}

export interface CreateActionSpec extends ActionSpec {
  enable_public: boolean
  enable_private: boolean
  max_lobbies_per_identity?: number
}

/** A config the service refuses while converting it, before validation. */
export type VersionConfigFault =
  { code: 'ERROR' } | { code: 'MATCHMAKER_INVALID_VERSION_CONFIG'; message: string }

class Fault extends Error {}

function nonNegative<T extends number | null | undefined>(value: T, field: string): T {
  if (typeof value === 'number' && value < 0) throw new Fault(`\`${field}\` out of bounds`)
  return value
}

/**
 * The lobby groups the service makes of a matchmaker config. When `lobby_groups` is present (even
 * empty) it wins and `game_modes` is ignored: `listable`, `taggable`, `allow_dynamic_max_players`
 * and `actions` then take their defaults (true, false, false, none), so a config read back (which
 * answers both forms) and posted unchanged loses them. A game mode inherits what it leaves out from
 * the matchmaker's own `regions`, `max_players*`, `docker`, `tier` and `idle_lobbies`.
 * A negative number is a fault: MATCHMAKER_INVALID_VERSION_CONFIG.
 */
export function lobbyGroupsOf(
  matchmaker: MatchmakerVersionConfig,
): { groups: LobbyGroupSpec[] } | { fault: VersionConfigFault } {
  try {
    const groups = matchmaker.lobby_groups
      ? matchmaker.lobby_groups.map(fromLobbyGroup)
      : Object.entries(matchmaker.game_modes ?? {}).map(([name, mode]) =>
          fromGameMode(name, mode, matchmaker),
        )
    if (matchmaker.captcha) {
      nonNegative(matchmaker.captcha.requests_before_reverify, 'requests_before_reverify')
      nonNegative(matchmaker.captcha.verification_ttl, 'verification_ttl')
    }
    return { groups }
  } catch (error) {
    if (!(error instanceof Fault)) throw error
    return { fault: { code: 'MATCHMAKER_INVALID_VERSION_CONFIG', message: error.message } }
  }
}

function fromGameMode(name: string, mode: GameMode, matchmaker: MatchmakerVersionConfig): LobbyGroupSpec {
  const normal = mode.max_players ?? matchmaker.max_players ?? DEFAULT_MAX_PLAYERS
  const direct = mode.max_players_direct ?? matchmaker.max_players_direct ?? normal
  const party = mode.max_players_party ?? matchmaker.max_players_party ?? normal
  nonNegative(normal, 'max_players')
  nonNegative(direct, 'max_players_direct')
  nonNegative(party, 'max_players_party')

  const group: LobbyGroupSpec = {
    name_id: name,
    regions: [],
    max_players_normal: normal,
    max_players_direct: direct,
    max_players_party: party,
    listable: mode.listable ?? true,
    taggable: mode.taggable ?? false,
    allow_dynamic_max_players: mode.allow_dynamic_max_players ?? false,
  }
  const docker = mode.docker ?? matchmaker.docker
  if (docker) {
    // The env of both levels is merged (the game mode's wins); the rest comes whole from one of them.
    const env = { ...matchmaker.docker?.env, ...mode.docker?.env }
    group.runtime = {
      docker: {
        ...(docker.image_id ? { build_id: docker.image_id } : {}),
        args: docker.args ?? [],
        env_vars: Object.entries(env).map(([key, value]) => ({ key, value })),
        network_mode: docker.network_mode ?? 'bridge',
        ports: Object.entries(docker.ports ?? {}).map(([label, port]) => ({
          label,
          ...optional('target_port', nonNegative(port.port, 'port')),
          ...optional('port_range', port.port_range && portRange(port.port_range)),
          proxy_protocol: port.protocol ?? 'https',
          proxy_kind: port.proxy ?? 'game_guard',
        })),
      },
    }
  }
  group.regions = Object.entries(mode.regions ?? matchmaker.regions ?? {}).map(([regionName, region]) => {
    const idle = region.idle_lobbies ?? mode.idle_lobbies ?? matchmaker.idle_lobbies
    return {
      region: { name_id: regionName },
      tier_name_id: region.tier ?? mode.tier ?? matchmaker.tier ?? DEFAULT_TIER,
      ...optional(
        'idle_lobbies',
        idle && {
          min_idle_lobbies: nonNegative(idle.min, 'idle_lobbies.min'),
          max_idle_lobbies: nonNegative(idle.max, 'idle_lobbies.max'),
        },
      ),
    }
  })
  if (mode.actions) {
    const { find, join, create } = mode.actions
    group.actions = {
      ...optional('find', find && action(find)),
      ...optional('join', join && action(join)),
      ...optional(
        'create',
        create && {
          ...action(create),
          enable_public: create.enable_public ?? false,
          enable_private: create.enable_private ?? true,
          ...optional(
            'max_lobbies_per_identity',
            nonNegative(create.max_lobbies_per_identity, 'actions.create.max_lobbies_per_identity'),
          ),
        },
      ),
    }
  }
  return group
}

function fromLobbyGroup(group: LobbyGroup): LobbyGroupSpec {
  nonNegative(group.max_players_normal, 'max_players')
  nonNegative(group.max_players_direct, 'max_players_direct')
  nonNegative(group.max_players_party, 'max_players_party')
  const regions = group.regions.map((region) => ({
    region: { region_id: region.region_id },
    tier_name_id: region.tier_name_id,
    ...optional(
      'idle_lobbies',
      region.idle_lobbies && {
        min_idle_lobbies: nonNegative(region.idle_lobbies.min_idle_lobbies, 'min_idle_lobbies'),
        max_idle_lobbies: nonNegative(region.idle_lobbies.max_idle_lobbies, 'max_idle_lobbies'),
      },
    ),
  }))
  const docker = group.runtime.docker
  return {
    name_id: group.name_id,
    regions,
    max_players_normal: group.max_players_normal,
    max_players_direct: group.max_players_direct,
    max_players_party: group.max_players_party,
    // The legacy form has no place for these: the service sets its defaults.
    listable: true,
    taggable: false,
    allow_dynamic_max_players: false,
    runtime: docker
      ? {
          docker: {
            ...(docker.build_id ? { build_id: docker.build_id } : {}),
            args: docker.args,
            env_vars: docker.env_vars.map(({ key, value }) => ({ key, value })),
            network_mode: docker.network_mode ?? 'bridge',
            ports: docker.ports.map((port) => ({
              label: port.label,
              ...optional('target_port', nonNegative(port.target_port, 'target_port')),
              ...optional('port_range', port.port_range && portRange(port.port_range)),
              proxy_protocol: port.proxy_protocol,
              proxy_kind: port.port_range ? 'none' : 'game_guard',
            })),
          },
        }
      : {},
  }
}

function portRange(range: PortRange): PortRange {
  return { min: nonNegative(range.min, 'port_range.min'), max: nonNegative(range.max, 'port_range.max') }
}

function action(config: GameModeActionConfig): ActionSpec {
  return {
    enabled: config.enabled,
    identity_requirement: config.identity_requirement ?? 'none',
    ...optional('verification', config.verification),
  }
}

/** `{ [key]: value }`, or nothing when the value is null or undefined. */
function optional<K extends string, V>(key: K, value: V | null | undefined): { [P in K]?: V } {
  return value === null || value === undefined ? {} : ({ [key]: value } as { [P in K]?: V })
}

/**
 * What the service refuses while it converts a config, before validation, in its order: a negative
 * route priority (500), a negative matchmaker number (400 MATCHMAKER_INVALID_VERSION_CONFIG), a
 * middleware without a kind among the routes and middlewares validation reads (500).
 */
export function versionConfigFault(config: VersionConfig): VersionConfigFault | undefined {
  const routes = config.cdn?.routes ?? []
  if (routes.some((route) => route.priority < 0)) return { code: 'ERROR' }
  if (config.matchmaker) {
    const converted = lobbyGroupsOf(config.matchmaker)
    if ('fault' in converted) return converted.fault
  }
  const kindless = routes
    .slice(0, CDN_ROUTES_MAX)
    .some((route) => route.middlewares.slice(0, CDN_MIDDLEWARES_MAX).some((m) => !m.kind.custom_headers))
  return kindless ? { code: 'ERROR' } : undefined
}

// Validation.

export interface VersionValidationInput {
  displayName: string
  config: VersionConfig
  /** Display names of the game's existing versions. */
  takenDisplayNames: Iterable<string>
  /** The regions the service knows; without them, a lobby group's regions are not checked. */
  regions?: ReadonlyArray<{ name_id: string; region_id: string }>
}

/**
 * Error suffixes of a version display name: 1 to 128 bytes, single inner spaces only. The service's
 * whitespace check has the length in it, so a name too short or too long is `invalid` as well.
 */
function versionDisplayNameProblems(displayName: string): string[] {
  const problems = displayNameProblems(displayName, DISPLAY_NAME_MAX_BYTES)
  if (problems[0] === 'too-short' || problems[0] === 'too-long') problems.push('invalid')
  return problems
}

/**
 * The error paths the service's version validation reports, in its order: the display name (and
 * its uniqueness in the game), the `cdn` section, the matchmaker (which must be there, with 1 to 32
 * game modes of 1 to 256 players, each with a docker runtime naming its build). Call
 * versionConfigFault first: a config with a fault never reaches validation. Indices in paths are strings.
 */
export function versionProblems(input: VersionValidationInput): string[][] {
  const errors: string[][] = versionDisplayNameProblems(input.displayName).map((problem) => [
    'display-name',
    problem,
  ])
  if ([...input.takenDisplayNames].includes(input.displayName)) errors.push(['display-name', 'not-unique'])
  const { cdn, matchmaker } = input.config
  if (cdn) errors.push(...cdnProblems(cdn))
  if (matchmaker) errors.push(...matchmakerProblems(matchmaker, input.regions))
  else errors.push(['config', 'matchmaker', 'missing'])
  return errors
}

/** The error paths of a `cdn` section (part of versionProblems), for a client that changes only it. */
function cdnProblems(cdn: CdnVersionConfig): string[][] {
  const errors: string[][] = []
  // The service does not check that the site is the game's (creation does).
  if (!cdn.site_id) errors.push(['config', 'cdn', 'no-site-id'])
  const routes = cdn.routes ?? []
  if (routes.length > CDN_ROUTES_MAX) errors.push(['config', 'cdn', 'routes-meta', 'too-many'])
  const globs = new Set<string>()
  for (const [routeIndex, route] of routes.slice(0, CDN_ROUTES_MAX).entries()) {
    const at = ['config', 'cdn', 'routes', String(routeIndex)]
    const tokens = parseGlob(route.glob) ?? []
    const glob = globToString(tokens)
    if (tokens.length === 0) errors.push([...at, 'glob', 'invalid'])
    else if (globs.has(glob)) errors.push([...at, 'glob', 'not-unique'])
    else globs.add(glob)
    if (route.priority > CDN_PRIORITY_MAX) errors.push([...at, 'priority', 'too-high'])
    else if (route.priority < 0) errors.push([...at, 'priority', 'too-low'])
    if (route.middlewares.length > CDN_MIDDLEWARES_MAX) errors.push([...at, 'middlewares-meta', 'too-many'])
    let customHeaders = 0
    for (const [middlewareIndex, middleware] of route.middlewares.slice(0, CDN_MIDDLEWARES_MAX).entries()) {
      const headersMiddleware = middleware.kind.custom_headers
      if (!headersMiddleware) continue
      const atMiddleware = [...at, 'middlewares', String(middlewareIndex)]
      if (customHeaders >= CDN_CUSTOM_HEADERS_MIDDLEWARES_MAX) errors.push([...atMiddleware, 'not-unique'])
      else customHeaders++
      const { headers } = headersMiddleware
      if (headers.length > CDN_HEADERS_MAX) {
        errors.push([...atMiddleware, 'custom-headers', 'headers-meta', 'too-many'])
      }
      for (const [headerIndex, header] of headers.slice(0, CDN_HEADERS_MAX).entries()) {
        const atHeader = [...atMiddleware, 'custom-headers', 'headers', String(headerIndex)]
        const nameBytes = Buffer.byteLength(header.name, 'utf8')
        if (nameBytes === 0) errors.push([...atHeader, 'name', 'invalid'])
        else if (nameBytes > CDN_HEADER_NAME_MAX_BYTES) errors.push([...atHeader, 'name', 'too-long'])
        if (Buffer.byteLength(header.value, 'utf8') > CDN_HEADER_VALUE_MAX_BYTES) {
          errors.push([...atHeader, 'value', 'too-long'])
        }
      }
    }
  }
  return errors
}

function matchmakerProblems(
  matchmaker: MatchmakerVersionConfig,
  regions: VersionValidationInput['regions'],
): string[][] {
  const converted = lobbyGroupsOf(matchmaker)
  if ('fault' in converted) return []
  const { groups } = converted
  const errors: string[][] = []
  if (groups.length === 0) errors.push(['config', 'matchmaker', 'game-modes-meta', 'too-few'])
  else if (groups.length > GAME_MODES_MAX)
    errors.push(['config', 'matchmaker', 'game-modes-meta', 'too-many'])
  for (const group of groups.slice(0, GAME_MODES_MAX)) {
    const at = ['config', 'matchmaker', 'game-modes', `*${group.name_id}*`]
    for (const [field, value] of [
      ['max-players-normal', group.max_players_normal],
      ['max-players-direct', group.max_players_direct],
      ['max-players-party', group.max_players_party],
    ] as const) {
      if (value === 0) errors.push([...at, 'player-counts', field, 'too-low'])
      else if (value > GAME_MODE_MAX_PLAYERS) errors.push([...at, 'player-counts', field, 'too-high'])
    }
    if (regions) {
      for (const [regionIndex, { region }] of group.regions.slice(0, REGIONS_CHECKED).entries()) {
        const known = regions.some((candidate) =>
          'name_id' in region
            ? candidate.name_id === region.name_id
            : candidate.region_id === region.region_id,
        )
        if (!known) errors.push([...at, 'regions', String(regionIndex), 'invalid'])
      }
    }
    const docker = group.runtime?.docker
    if (!docker) errors.push([...at, 'no-runtime'])
    else if (docker.build_id === undefined) errors.push([...at, 'no-build'])
  }
  return errors
}
