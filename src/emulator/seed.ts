// The data the emulator starts with: tokens, games and what they already hold.

import type { CustomAvatarSummary, LobbySummary, Server } from '../api/types.ts'
import type { VersionConfig } from './matchmaker-config.ts'
import { versionConfigFault, versionProblems } from './version-rules.ts'
import { REGIONS } from './version-config.ts'

export interface SeedToken {
  token: string
  gameIds: string[]
  /** Milliseconds since the epoch; the token is refused from this instant on. */
  expiresAt?: number
}

export interface SeedNamespace {
  id: string
  nameId: string
  displayName: string
  versionId: string
  domains?: string[]
  /** RFC 3339; default the start of 2025. */
  createTs?: string
}

export interface SeedVersion {
  id: string
  displayName: string
  /** RFC 3339: the newest version is the game's latest. */
  createTs: string
  /**
   * The config as it would be posted (snake_case, `game_modes` or `lobby_groups`); it must pass the
   * service's validation. Default DEFAULT_VERSION_CONFIG.
   */
  config?: VersionConfig
}

export interface SeedGame {
  id: string
  /** Default the id's first 8 characters. */
  nameId?: string
  displayName?: string
  /**
   * Existing versions (creating a namespace needs one), oldest first. A bare id string stands for a
   * version created that many days after the start of 2025 as its position in the list, with the
   * default config.
   */
  versions: Array<string | SeedVersion>
  namespaces?: SeedNamespace[]
  environments?: Array<{ id: string; servers: Server[] }>
  /** Each names its namespace_id, which must be a namespace of this game. */
  lobbies?: LobbySummary[]
  avatars?: CustomAvatarSummary[]
}

export interface Seed {
  tokens: SeedToken[]
  games: SeedGame[]
  /** Existing group display names (groups.validate reports them as not-unique). */
  groups?: string[]
}

/** Throws when the seed contradicts itself, so a bad --seed file fails at start and not mid-deploy. */
export function checkSeed(seed: Seed): void {
  if (
    typeof seed !== 'object' ||
    seed === null ||
    !Array.isArray(seed.tokens) ||
    !Array.isArray(seed.games)
  ) {
    throw new Error('a seed needs a "tokens" array and a "games" array')
  }
  const gameIds = new Set<string>()
  for (const game of seed.games) {
    if (typeof game.id !== 'string' || !Array.isArray(game.versions)) {
      throw new Error('every seed game needs an "id" string and a "versions" array')
    }
    if (gameIds.has(game.id)) throw new Error(`seed game "${game.id}" appears twice`)
    gameIds.add(game.id)
    checkSeedVersions(game)
    const namespaceIds = new Set((game.namespaces ?? []).map((namespace) => namespace.id))
    for (const lobby of game.lobbies ?? []) {
      if (!namespaceIds.has(lobby.namespace_id)) {
        throw new Error(
          `seed lobby "${lobby.lobby_id}" names namespace "${lobby.namespace_id}", which game "${game.id}" does not have`,
        )
      }
    }
  }
  for (const token of seed.tokens) {
    if (typeof token.token !== 'string' || !Array.isArray(token.gameIds)) {
      throw new Error('every seed token needs a "token" string and a "gameIds" array')
    }
  }
}

/** Each seeded version's config must be one the service would have accepted. */
function checkSeedVersions(game: SeedGame): void {
  const names: string[] = []
  for (const version of game.versions) {
    if (typeof version === 'string') continue
    const config = version.config ?? DEFAULT_VERSION_CONFIG
    if (typeof config !== 'object' || config === null || Array.isArray(config)) {
      throw new Error(`seed version "${version.id}" has a config that is not an object`)
    }
    const fault = versionConfigFault(config)
    const problems = fault
      ? [[fault.code]]
      : versionProblems({
          displayName: version.displayName,
          config,
          takenDisplayNames: names,
          regions: REGIONS,
        })
    if (problems.length > 0) {
      throw new Error(
        `seed version "${version.id}" would not pass the service's validation: ${problems.map((p) => p.join('.')).join(', ')}`,
      )
    }
    names.push(version.displayName)
  }
}

const DEMO_NAMESPACE_ID = '3f6c2a9e-8b1d-4c7a-9e25-5d0b7a41c8f2'
const OTHER_NAMESPACE_ID = '9a41d7c3-2e58-4b0f-8c6d-71e3b2f4a590'
const DEMO_STAGING_ID = '6e2b9d4a-1f7c-4a3e-b852-0c9d4e7f1a36'
const OTHER_STAGING_ID = '7f3c0e5b-2a8d-4b4f-9963-1d0e5f8a2b47'
const DEMO_DEFAULT_VERSION = '1a6d3f8b-0c4e-4b7a-9f52-6e8d0b3c7a19'
const DEMO_BUILD = 'c2d8e4f1-5a7b-4e3c-9d1f-8b6a2e0c4d73'
const DEMO_OLD_BUILD = 'b1c7d3e0-4f6a-4d2b-8c0e-7a5f1d9b3c62'
const DEFAULT_BUILD = 'e4f0a6b3-7c9d-4e5f-8a21-9d8c3b2a1f04'

/** The config of a seeded version that names none: one game mode on the demo's build. */
export const DEFAULT_VERSION_CONFIG: VersionConfig = {
  matchmaker: {
    game_modes: { default: {} },
    regions: { 'eu-fra': {} },
    max_players: 8,
    docker: { image_id: DEFAULT_BUILD, ports: { game: { port: 7777, protocol: 'udp' } } },
  },
}

/** The demo game's 0.9.0: one game mode, one region. */
const DEMO_V0_9_CONFIG: VersionConfig = {
  matchmaker: {
    game_modes: { default: { max_players: 8 } },
    regions: { 'eu-fra': { tier: 'basic-1d1' } },
    docker: {
      image_id: DEMO_OLD_BUILD,
      args: ['--port', '7777'],
      env: { LOG_LEVEL: 'info' },
      ports: { game: { port: 7777, protocol: 'udp' }, http: { port: 8080, protocol: 'https' } },
    },
  },
}

/**
 * The demo game's 1.0.0, the live one: `ranked-duo` sets what only `game_modes` can carry (listable,
 * taggable, dynamic max players, actions), which re-posting the config with `lobby_groups` loses.
 */
const DEMO_V1_0_CONFIG: VersionConfig = {
  matchmaker: {
    game_modes: {
      default: { max_players: 16, max_players_party: 4 },
      'ranked-duo': {
        max_players: 2,
        listable: false,
        taggable: true,
        allow_dynamic_max_players: true,
        tier: 'basic-2d1',
        idle_lobbies: { min: 1, max: 4 },
        actions: {
          find: { enabled: true, identity_requirement: 'guest' },
          join: { enabled: false },
          create: { enabled: true, enable_public: false, enable_private: true, max_lobbies_per_identity: 1 },
        },
      },
    },
    // A region's own tier would win over the game mode's: the regions leave it to the modes.
    regions: { 'eu-fra': {}, 'us-nyc': {} },
    tier: 'basic-1d1',
    docker: {
      image_id: DEMO_BUILD,
      args: ['--port', '7777'],
      env: { LOG_LEVEL: 'info' },
      network_mode: 'bridge',
      ports: { game: { port: 7777, protocol: 'udp' }, http: { port: 8080, protocol: 'https' } },
    },
  },
}

interface DemoServer {
  id: string
  datacenter: string
  region: 'eu' | 'us'
  publicPort: number
  createdAt: string
  destroyedAt?: string
}

function demoServer({ id, datacenter, region, publicPort, createdAt, destroyedAt }: DemoServer): Server {
  const created = Date.parse(createdAt)
  const hostname = `${datacenter}.demo-game.gamehost.example`
  return {
    id,
    environment: '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15',
    datacenter,
    created_at: created,
    started_at: created + 8_400,
    ...(destroyedAt === undefined ? {} : { destroyed_at: Date.parse(destroyedAt) }),
    tags: { region, mode: region === 'eu' ? 'ranked' : 'casual' },
    lifecycle: { kill_timeout: 30_000 },
    network: {
      mode: 'bridge',
      ports: {
        game: {
          internal_port: 7777,
          protocol: 'udp',
          public_hostname: hostname,
          public_port: publicPort,
          routing: { host: {} },
        },
        http: {
          internal_port: 8080,
          protocol: 'https',
          public_hostname: hostname,
          public_port: 443,
          routing: { game_guard: {} },
        },
      },
    },
    resources: { cpu: 1000, memory: 1024 },
    runtime: {
      build: DEMO_BUILD,
      arguments: ['--port', '7777'],
      environment: { LOG_LEVEL: 'info', REGION: region },
    },
  }
}

export const DEFAULT_SEED: Seed = {
  tokens: [
    { token: 'gamehost-demo-token', gameIds: ['4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'] },
    {
      token: 'gamehost-expired-token',
      gameIds: ['4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'],
      expiresAt: Date.parse('2024-01-01T00:00:00Z'),
    },
    { token: 'gamehost-other-token', gameIds: ['2e7f4a9c-6b1d-4e3a-9c58-d0a3f6b2e814'] },
  ],
  games: [
    {
      id: '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
      nameId: 'demo-game',
      displayName: 'Demo Game',
      // Made as the real service makes a game: a default version, 0.0.1, with `prod` and `staging` on
      // it; two releases published to `prod` since.
      versions: [
        { id: DEMO_DEFAULT_VERSION, displayName: '0.0.1', createTs: '2025-03-01T09:00:00Z' },
        {
          id: '5a0e7c2d-4b9f-4e1a-8d36-2c7f1b9e4a08',
          displayName: '0.9.0',
          createTs: '2025-03-20T10:00:00Z',
          config: DEMO_V0_9_CONFIG,
        },
        {
          id: '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
          displayName: '1.0.0',
          createTs: '2025-04-30T16:12:05Z',
          config: DEMO_V1_0_CONFIG,
        },
      ],
      namespaces: [
        {
          id: DEMO_NAMESPACE_ID,
          nameId: 'prod',
          displayName: 'Production',
          versionId: '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
          createTs: '2025-03-01T09:00:01Z',
        },
        {
          id: DEMO_STAGING_ID,
          nameId: 'staging',
          displayName: 'Staging',
          versionId: DEMO_DEFAULT_VERSION,
          createTs: '2025-03-01T09:00:02Z',
        },
      ],
      environments: [
        {
          id: '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15',
          servers: [
            demoServer({
              id: '1b7e4c20-6f3a-4d8e-a915-0c2f7d3e8b41',
              datacenter: 'eu-fra-1',
              region: 'eu',
              publicPort: 26101,
              createdAt: '2025-05-02T09:14:03Z',
            }),
            demoServer({
              id: '2c8f5d31-7a4b-4e9f-b026-1d3a8e4f9c52',
              datacenter: 'eu-ams-1',
              region: 'eu',
              publicPort: 26102,
              createdAt: '2025-05-03T11:40:27Z',
              destroyedAt: '2025-05-03T18:02:11Z',
            }),
            demoServer({
              id: '3d906e42-8b5c-4fa0-9137-2e4b9f5a0d63',
              datacenter: 'us-nyc-1',
              region: 'us',
              publicPort: 26103,
              createdAt: '2025-05-04T15:22:48Z',
            }),
            demoServer({
              id: '4ea17f53-9c6d-40b1-a248-3f5c0a6b1e74',
              datacenter: 'us-sfo-1',
              region: 'us',
              publicPort: 26104,
              createdAt: '2025-05-05T07:05:19Z',
              destroyedAt: '2025-05-05T07:45:00Z',
            }),
            demoServer({
              id: '5fb28064-ad7e-41c2-b359-406d1b7c2f85',
              datacenter: 'eu-fra-1',
              region: 'eu',
              publicPort: 26105,
              createdAt: '2025-05-06T20:31:56Z',
            }),
          ],
        },
      ],
      lobbies: [
        {
          lobby_id: '7d4e1a2b-3c5f-4e6a-8b9c-0d1e2f3a4b5c',
          namespace_id: DEMO_NAMESPACE_ID,
          lobby_group_name_id: 'default',
          region_id: 'eu-fra',
          create_ts: '2025-05-06T20:32:04Z',
          ready_ts: '2025-05-06T20:32:11Z',
          start_ts: '2025-05-06T20:32:09Z',
          status: { running: {} },
          metrics: {
            job: 'job-7d4e1a2b',
            cpu: [0.12, 0.18, 0.31, 0.27],
            memory: [212.5, 230.1, 241.8, 239.4],
            allocated_memory: 1024,
          },
        },
        {
          lobby_id: '8e5f2b3c-4d6a-4f7b-9cad-1e2f3a4b5c6d',
          namespace_id: DEMO_NAMESPACE_ID,
          lobby_group_name_id: 'ranked-duo',
          region_id: 'us-nyc',
          create_ts: '2025-05-05T07:05:30Z',
          ready_ts: '2025-05-05T07:05:41Z',
          start_ts: '2025-05-05T07:05:38Z',
          status: { running: {}, stopped: { exit_code: 137, failed: true, stop_ts: '2025-05-05T07:44:52Z' } },
          metrics: {
            job: 'job-8e5f2b3c',
            cpu: [0.44, 0.97, 1.0],
            memory: [498.2, 1011.7, 1024.0],
            allocated_memory: 1024,
          },
        },
      ],
      avatars: [
        {
          upload_id: 'a3c1e5f7-0b2d-4f6a-8c9e-1a3b5c7d9e0f',
          display_name: 'Knight',
          content_length: 48_213,
          create_ts: '2025-04-18T13:02:44Z',
          complete: true,
          url: 'https://assets.gamehost.example/avatars/a3c1e5f7-0b2d-4f6a-8c9e-1a3b5c7d9e0f/knight.png',
        },
        {
          upload_id: 'b4d2f6a8-1c3e-4a7b-9d0f-2b4c6d8e0f1a',
          display_name: 'Ranger',
          content_length: 52_907,
          create_ts: '2025-04-18T13:05:10Z',
          complete: true,
          url: 'https://assets.gamehost.example/avatars/b4d2f6a8-1c3e-4a7b-9d0f-2b4c6d8e0f1a/ranger.png',
        },
        {
          upload_id: 'c5e3a7b9-2d4f-4b8c-ae1a-3c5d7e9f1a2b',
          display_name: 'Wizard',
          content_length: 61_440,
          create_ts: '2025-05-01T08:47:33Z',
          complete: false,
        },
      ],
    },
    {
      id: '2e7f4a9c-6b1d-4e3a-9c58-d0a3f6b2e814',
      nameId: 'other-game',
      displayName: 'Other Game',
      versions: ['6d1b8e3f-9a2c-4d7e-8b41-5c0f3a6e9d27'],
      namespaces: [
        {
          id: OTHER_NAMESPACE_ID,
          nameId: 'prod',
          displayName: 'Production',
          versionId: '6d1b8e3f-9a2c-4d7e-8b41-5c0f3a6e9d27',
          domains: ['play.other-game.example'],
        },
        {
          id: OTHER_STAGING_ID,
          nameId: 'staging',
          displayName: 'Staging',
          versionId: '6d1b8e3f-9a2c-4d7e-8b41-5c0f3a6e9d27',
        },
      ],
    },
  ],
  groups: ['Taken Group'],
}
