// The matchmaker part of a version's config as the service takes it (read from its source): only the
// emulator checks and keeps it; the client passes it on as it is.
import type { VersionConfig as WireVersionConfig } from '../api/versions.ts'

export type NetworkMode = 'bridge' | 'host'
export type PortProtocol = 'http' | 'https' | 'tcp' | 'tcp_tls' | 'udp'
export type ProxyKind = 'none' | 'game_guard'
export type IdentityRequirement = 'none' | 'guest' | 'registered'

export interface PortRange {
  min: number
  max: number
}

interface IdleLobbies {
  min: number
  max: number
}

interface GameModeRegion {
  tier?: string | null
  idle_lobbies?: IdleLobbies | null
}

interface GameModeDockerPort {
  port?: number | null
  port_range?: PortRange | null
  protocol?: PortProtocol | null
  proxy?: ProxyKind | null
  dev_port?: number | null
  dev_port_range?: PortRange | null
  dev_protocol?: PortProtocol | null
}

interface GameModeDocker {
  dockerfile?: string | null
  image?: string | null
  image_id?: string | null
  args?: string[] | null
  env?: Record<string, string> | null
  network_mode?: NetworkMode | null
  ports?: Record<string, GameModeDockerPort> | null
}

export interface Verification {
  url: string
  headers: Record<string, string>
}

export interface GameModeActionConfig {
  enabled: boolean
  identity_requirement?: IdentityRequirement | null
  verification?: Verification | null
}

interface GameModeCreateConfig extends GameModeActionConfig {
  enable_public?: boolean | null
  enable_private?: boolean | null
  max_lobbies_per_identity?: number | null
}

interface GameModeActions {
  find?: GameModeActionConfig | null
  join?: GameModeActionConfig | null
  create?: GameModeCreateConfig | null
}

export interface GameMode {
  regions?: Record<string, GameModeRegion> | null
  max_players?: number | null
  max_players_direct?: number | null
  max_players_party?: number | null
  docker?: GameModeDocker | null
  listable?: boolean | null
  taggable?: boolean | null
  allow_dynamic_max_players?: boolean | null
  actions?: GameModeActions | null
  tier?: string | null
  idle_lobbies?: IdleLobbies | null
}

interface LobbyGroupRegion {
  region_id: string
  tier_name_id: string
  idle_lobbies?: { min_idle_lobbies: number; max_idle_lobbies: number } | null
}

interface LobbyGroupDockerPort {
  label: string
  target_port?: number | null
  port_range?: PortRange | null
  proxy_protocol: PortProtocol
}

export interface LobbyGroup {
  name_id: string
  regions: LobbyGroupRegion[]
  max_players_normal: number
  max_players_direct: number
  max_players_party: number
  runtime: {
    docker?: {
      build_id?: string | null
      args: string[]
      env_vars: Array<{ key: string; value: string }>
      network_mode?: NetworkMode | null
      ports: LobbyGroupDockerPort[]
    } | null
  }
}

export interface Captcha {
  requests_before_reverify: number
  verification_ttl: number
  hcaptcha?: { level: 'easy' | 'moderate' | 'difficult' | 'always_on' } | null
  turnstile?: { site_key: string; secret_key: string } | null
}

export interface MatchmakerVersionConfig {
  game_modes?: Record<string, GameMode> | null
  captcha?: Captcha | null
  dev_hostname?: string | null
  regions?: Record<string, GameModeRegion> | null
  max_players?: number | null
  max_players_direct?: number | null
  max_players_party?: number | null
  docker?: GameModeDocker | null
  tier?: string | null
  idle_lobbies?: IdleLobbies | null
  /** The legacy form: when present, `game_modes` is ignored (see lobbyGroupsOf). */
  lobby_groups?: LobbyGroup[] | null
}

/** A version's config with its matchmaker typed. */
export interface VersionConfig extends Omit<WireVersionConfig, 'matchmaker'> {
  matchmaker?: MatchmakerVersionConfig | null
}
