// The emulator's in-memory state: games from the seed, the namespaces, domains, versions (with what
// the service stores of their config), publishes and CDN sites created since, and read-only views of
// them for tests.

import { randomUUID } from 'node:crypto'
import type { CustomAvatarSummary, FileDescriptor, LobbySummary, Server } from '../api/types.ts'
import { DEFAULT_VERSION_CONFIG, type Seed, type SeedGame, type SeedToken, type SeedVersion } from './seed.ts'
import { storeVersionConfig, type StoredVersionConfig } from './version-config.ts'

export interface NamespaceView {
  namespaceId: string
  gameId: string
  nameId: string
  displayName: string
  versionId: string
  /** The version its host serves; undefined while it serves nothing. */
  liveVersionId: string | undefined
  domains: string[]
  /** Its custom domains still pending verification (not served). */
  pendingDomains: string[]
}

export interface SitePartView {
  path: string
  /** Position of the part within its file, from 0. */
  index: number
  byteOffset: number
  contentLength: number
  uploaded: boolean
  md5?: string
}

export interface SiteView {
  siteId: string
  uploadId: string
  gameId: string
  displayName: string
  completed: boolean
  files: FileDescriptor[]
  parts: SitePartView[]
}

export interface DomainRecord {
  domain: string
  /** RFC 3339. */
  createTs: string
  /** False while pending: the CDN does not serve it (EmulatorOptions.verifyDomains). */
  verified: boolean
}

export interface NamespaceRecord {
  id: string
  gameId: string
  nameId: string
  displayName: string
  versionId: string
  /**
   * The version its host serves, as the CDN's router last loaded the namespace's config; undefined
   * while it has no config (see cdn-config.ts). Lags behind versionId.
   */
  liveVersionId: string | undefined
  /** RFC 3339. */
  createTs: string
  domains: DomainRecord[]
  /** Every publish of a version to the namespace, oldest first (creating it records none). */
  history: VersionDeploy[]
  /** Its CDN basic auth as the API set it: `basic` or `none`, and each user's bcrypt hash, in order added. */
  authType: 'basic' | 'none'
  authUsers: Map<string, string>
  /** The basic auth its hosts apply, as the CDN's router last loaded the config (see cdn-config.ts). */
  liveAuth: CdnAuth
}

/** What a namespace's hosts ask for: nothing, or one of these users' passwords (their bcrypt hashes). */
export interface CdnAuth {
  type: 'basic' | 'none'
  users: ReadonlyArray<readonly [user: string, hash: string]>
}

export const PUBLIC_AUTH: CdnAuth = { type: 'none', users: [] }

export interface VersionDeploy {
  versionId: string
  /** RFC 3339. */
  deployTs: string
}

export interface VersionRecord {
  id: string
  displayName: string
  /** RFC 3339. */
  createTs: string
  /** Immutable once created. */
  config: StoredVersionConfig
}

export interface GameRecord {
  id: string
  nameId: string
  displayName: string
  /** Oldest first, as the service lists them. */
  versions: Map<string, VersionRecord>
  /** Names handed out by versions/reserve-name, oldest first. */
  reservedVersionNames: string[]
  namespaces: NamespaceRecord[]
  environments: Map<string, Server[]>
  lobbies: LobbySummary[]
  avatars: CustomAvatarSummary[]
}

export interface SitePart {
  fileIndex: number
  path: string
  index: number
  byteOffset: number
  contentLength: number
  /** MD5 hex of the bytes stored for this part; undefined until a PUT succeeded. */
  md5: string | undefined
}

export interface SiteRecord {
  siteId: string
  uploadId: string
  gameId: string
  displayName: string
  files: FileDescriptor[]
  parts: SitePart[]
  completed: boolean
  /** Set while the upload is being assembled, so a second complete waits for the first. */
  completing: Promise<void> | undefined
}

export class EmulatorState {
  private readonly tokens: Map<string, SeedToken>
  private readonly games = new Map<string, GameRecord>()
  private readonly groups: Set<string>
  private readonly sitesById = new Map<string, SiteRecord>()
  private readonly sitesByUpload = new Map<string, SiteRecord>()
  private readonly now: () => number

  constructor(seed: Seed, now: () => number = Date.now) {
    this.now = now
    this.tokens = new Map(seed.tokens.map((token) => [token.token, structuredClone(token)]))
    this.groups = new Set(seed.groups ?? [])
    for (const game of structuredClone(seed.games)) {
      this.games.set(game.id, {
        id: game.id,
        nameId: game.nameId ?? game.id.slice(0, 8),
        displayName: game.displayName ?? game.id.slice(0, 8),
        versions: new Map(
          seedVersions(game).map(({ config, ...version }) => [
            version.id,
            { ...version, config: storeVersionConfig(config ?? DEFAULT_VERSION_CONFIG) },
          ]),
        ),
        reservedVersionNames: [],
        namespaces: (game.namespaces ?? []).map((namespace) => {
          const createTs = namespace.createTs ?? SEED_EPOCH
          return {
            id: namespace.id,
            gameId: game.id,
            nameId: namespace.nameId,
            displayName: namespace.displayName,
            versionId: namespace.versionId,
            liveVersionId: namespace.versionId,
            createTs,
            domains: (namespace.domains ?? []).map((domain) => ({ domain, createTs, verified: true })),
            history: [],
            authType: 'none' as const,
            authUsers: new Map<string, string>(),
            liveAuth: PUBLIC_AUTH,
          }
        }),
        environments: new Map(
          (game.environments ?? []).map((environment) => [environment.id, environment.servers]),
        ),
        lobbies: game.lobbies ?? [],
        avatars: game.avatars ?? [],
      })
    }
  }

  token(token: string): SeedToken | undefined {
    return this.tokens.get(token)
  }

  game(gameId: string): GameRecord | undefined {
    return this.games.get(gameId)
  }

  allGames(): IterableIterator<GameRecord> {
    return this.games.values()
  }

  namespace(game: GameRecord, namespaceId: string): NamespaceRecord | undefined {
    return game.namespaces.find((namespace) => namespace.id === namespaceId)
  }

  isGroupNameTaken(displayName: string): boolean {
    return this.groups.has(displayName)
  }

  isDomainTaken(domain: string): boolean {
    for (const game of this.games.values()) {
      if (game.namespaces.some((namespace) => hasDomain(namespace, domain))) return true
    }
    return false
  }

  /** A new namespace, with no CDN config yet (cdn-config.ts decides whether it gets one). */
  createNamespace(game: GameRecord, displayName: string, nameId: string, versionId: string): NamespaceRecord {
    const namespace: NamespaceRecord = {
      id: randomUUID(),
      gameId: game.id,
      nameId,
      displayName,
      versionId,
      liveVersionId: undefined,
      createTs: new Date(this.now()).toISOString(),
      domains: [],
      history: [],
      authType: 'none',
      authUsers: new Map(),
      liveAuth: PUBLIC_AUTH,
    }
    game.namespaces.push(namespace)
    return namespace
  }

  /** Records a version (its display name is taken from now on) with what storage kept of its config. */
  createVersion(game: GameRecord, displayName: string, config: StoredVersionConfig): VersionRecord {
    const version: VersionRecord = {
      id: randomUUID(),
      displayName,
      createTs: new Date(this.now()).toISOString(),
      config,
    }
    game.versions.set(version.id, version)
    return version
  }

  /** Makes the version live in the namespace; false (and no history entry) when it already was. */
  publishVersion(namespace: NamespaceRecord, versionId: string): boolean {
    if (namespace.versionId === versionId) return false
    namespace.versionId = versionId
    namespace.history.push({ versionId, deployTs: new Date(this.now()).toISOString() })
    return true
  }

  /**
   * The next name of the form `YYYY.MM (N)` (UTC month; N one more than the highest reserved this
   * month in the game, from 1), as the service's reservation table hands them out. Reservations only
   * count reservations: a version created under such a name by hand does not move the counter.
   */
  reserveVersionName(game: GameRecord): string {
    const now = new Date(this.now())
    const prefix = `${now.getUTCFullYear()}.${String(now.getUTCMonth() + 1).padStart(2, '0')}`
    let highest = 0
    for (const name of game.reservedVersionNames) {
      const number = name.startsWith(`${prefix} (`) ? /^(\d+)\)$/.exec(name.slice(prefix.length + 2)) : null
      if (number) highest = Math.max(highest, Number(number[1]))
    }
    const name = `${prefix} (${highest + 1})`
    game.reservedVersionNames.push(name)
    return name
  }

  addDomain(namespace: NamespaceRecord, domain: string, verified: boolean): void {
    namespace.domains.push({ domain, createTs: new Date(this.now()).toISOString(), verified })
  }

  /** Pending custom domains of all the game's namespaces (the service counts them per team). */
  pendingDomainCount(game: GameRecord): number {
    return game.namespaces.reduce((sum, ns) => sum + ns.domains.filter((entry) => !entry.verified).length, 0)
  }

  /** Marks a domain verified wherever it is attached; false when no namespace has it. */
  verifyDomain(domain: string): boolean {
    let found = false
    for (const game of this.games.values()) {
      for (const namespace of game.namespaces) {
        for (const entry of namespace.domains) {
          if (entry.domain !== domain) continue
          entry.verified = true
          found = true
        }
      }
    }
    return found
  }

  /** False when the namespace did not have the domain. */
  removeDomain(namespace: NamespaceRecord, domain: string): boolean {
    const index = namespace.domains.findIndex((entry) => entry.domain === domain)
    if (index >= 0) namespace.domains.splice(index, 1)
    return index >= 0
  }

  createSite(gameId: string, displayName: string, files: FileDescriptor[], parts: SitePart[]): SiteRecord {
    const site: SiteRecord = {
      siteId: randomUUID(),
      uploadId: randomUUID(),
      gameId,
      displayName,
      files,
      parts,
      completed: false,
      completing: undefined,
    }
    this.sitesById.set(site.siteId, site)
    this.sitesByUpload.set(site.uploadId, site)
    return site
  }

  siteById(siteId: string): SiteRecord | undefined {
    return this.sitesById.get(siteId)
  }

  siteByUpload(uploadId: string): SiteRecord | undefined {
    return this.sitesByUpload.get(uploadId)
  }

  namespaceViews(gameId: string): NamespaceView[] {
    return (this.games.get(gameId)?.namespaces ?? []).map((namespace) => ({
      namespaceId: namespace.id,
      gameId: namespace.gameId,
      nameId: namespace.nameId,
      displayName: namespace.displayName,
      versionId: namespace.versionId,
      liveVersionId: namespace.liveVersionId,
      domains: namespace.domains.map((entry) => entry.domain),
      pendingDomains: namespace.domains.filter((entry) => !entry.verified).map((entry) => entry.domain),
    }))
  }

  siteView(siteId: string): SiteView | undefined {
    const site = this.sitesById.get(siteId)
    return site && viewOfSite(site)
  }

  siteViews(gameId: string): SiteView[] {
    return [...this.sitesById.values()].filter((site) => site.gameId === gameId).map(viewOfSite)
  }
}

const SEED_EPOCH = '2025-01-01T00:00:00.000Z'
const DAY_MS = 24 * 60 * 60 * 1000

export function hasDomain(namespace: NamespaceRecord, domain: string): boolean {
  return namespace.domains.some((entry) => entry.domain === domain)
}

function seedVersions(game: SeedGame): SeedVersion[] {
  return game.versions.map((version, index) =>
    typeof version === 'string'
      ? {
          id: version,
          displayName: `v${index + 1}`,
          createTs: new Date(Date.parse(SEED_EPOCH) + index * DAY_MS).toISOString(),
        }
      : version,
  )
}

function viewOfSite(site: SiteRecord): SiteView {
  return {
    siteId: site.siteId,
    uploadId: site.uploadId,
    gameId: site.gameId,
    displayName: site.displayName,
    completed: site.completed,
    files: site.files.map((file) => ({ ...file })),
    parts: site.parts.map((part) => ({
      path: part.path,
      index: part.index,
      byteOffset: part.byteOffset,
      contentLength: part.contentLength,
      uploaded: part.md5 !== undefined,
      ...(part.md5 === undefined ? {} : { md5: part.md5 }),
    })),
  }
}
