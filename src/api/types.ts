// Resources and request/response bodies of the service, as its interface defines them.
// Timestamps on servers are milliseconds since the epoch; the others are RFC 3339 strings.
import type { CdnRoute } from './versions.ts'

export interface Server {
  id: string
  environment: string
  datacenter: string
  created_at: number
  started_at?: number
  destroyed_at?: number
  tags: Record<string, string>
  lifecycle: { kill_timeout?: number }
  network: {
    mode?: string
    ports: Record<string, ServerPort>
  }
  resources: { cpu: number; memory: number }
  runtime: {
    build: string
    arguments?: string[]
    environment?: Record<string, string>
  }
}

interface ServerPort {
  internal_port?: number
  protocol: string
  public_hostname?: string
  public_port?: number
  routing: { game_guard?: Record<string, unknown>; host?: Record<string, unknown> }
}

interface LobbyStopped {
  exit_code: number
  failed: boolean
  stop_ts: string
}

export interface LobbySummary {
  lobby_id: string
  namespace_id: string
  lobby_group_name_id: string
  region_id: string
  create_ts: string
  ready_ts?: string
  start_ts?: string
  status: { running: Record<string, unknown>; stopped?: LobbyStopped }
  metrics?: { job: string; cpu: number[]; memory: number[]; allocated_memory?: number }
}

export interface CustomAvatarSummary {
  upload_id: string
  display_name: string
  content_length: number
  create_ts: string
  complete: boolean
  url?: string
}

export interface ValidationError {
  path: string[]
}

export interface FileDescriptor {
  path: string
  content_length: number
  content_type?: string
}

export interface PresignedRequest {
  path: string
  url: string
  byte_offset: number
  content_length: number
}

export interface ListServersQuery {
  tags?: Record<string, string>
  includeDestroyed?: boolean
  cursor?: string
}

export interface ListServersResponse {
  servers: Server[]
}
/** The real service puts `metrics` beside `lobby`; the interface document puts it inside. Read both. */
export interface GetLobbyResponse {
  lobby: LobbySummary
  metrics?: LobbySummary['metrics']
}
export interface ValidateResponse {
  errors: ValidationError[]
}
export interface ListAvatarsResponse {
  custom_avatars: CustomAvatarSummary[]
}

export interface MatchmakerConfig {
  lobby_count_max: number
  max_players: number
}

export interface CreateNamespaceRequest {
  display_name: string
  name_id: string
  version_id: string
}
export interface CreateNamespaceResponse {
  namespace_id: string
}

export interface CreateCdnSiteRequest {
  display_name: string
  files: FileDescriptor[]
}
export interface CreateCdnSiteResponse {
  site_id: string
  upload_id: string
  presigned_requests: PresignedRequest[]
}

export interface NamespaceSummary {
  namespace_id: string
  name_id: string
  display_name: string
  version_id: string
  create_ts: string
}

export interface VersionSummary {
  version_id: string
  display_name: string
  create_ts: string
}

/** The fields the client reads (the service sends more). */
export interface GetGameResponse {
  game: {
    game_id: string
    name_id: string
    display_name: string
    namespaces: NamespaceSummary[]
    versions: VersionSummary[]
  }
}

interface NamespaceDomain {
  domain: string
  create_ts: string
  /** `active` once its DNS points at the namespace's host and its certificate is issued; `pending` until then; `failed`. */
  verification_status?: string
  /** `http.cname_record`: the host name the domain's CNAME record must point at. */
  verification_method?: { http?: { cname_record: string } | null; invalid?: object | null }
  verification_errors?: string[]
}

/** `domains.cdn` is absent on a service without one. */
export interface BootstrapResponse {
  domains?: { cdn?: string | null; main?: string | null; job?: string | null } | null
}

export interface GetNamespaceResponse {
  namespace: NamespaceSummary & {
    config: {
      cdn: {
        domains: NamespaceDomain[]
        /** `basic`: every host of the namespace asks for one of its users' credentials; `none`: public. */
        auth_type?: CdnAuthType
        auth_user_list?: Array<{ user: string }>
      }
    }
  }
}

export type CdnAuthType = 'basic' | 'none'

/** `password` is a bcrypt hash, never the password. */
export interface CdnAuthUserRequest {
  user: string
  password: string
}

export interface ServiceErrorBody {
  code: string
  message: string
  ray_id: string
  documentation?: string
  metadata?: unknown
}

export const RAY_ID_HEADER = 'rvt-ray-id'

/** A deploy changes `cdn.site_id` (and routes) and keeps every other section. */
export interface VersionConfig {
  cdn?: { site_id?: string; routes?: CdnRoute[]; [field: string]: unknown }
  matchmaker?: { game_modes?: unknown; lobby_groups?: unknown; [field: string]: unknown }
  [section: string]: unknown
}

export interface GameVersion extends VersionSummary {
  config: VersionConfig
}

export interface CreateVersionRequest {
  display_name: string
  config: VersionConfig
}

/** Newest first. */
export interface NamespaceVersionHistory {
  versions: Array<{ namespace_id: string; version_id: string; deploy_ts: string }>
}
