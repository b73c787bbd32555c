// The emulator's in-memory state: games from the seed, the namespaces, domains and CDN sites created
// since, and read-only views of them for tests.

import { randomUUID } from 'node:crypto'
import type { CustomAvatarSummary, FileDescriptor, LobbySummary, Server } from '../api/types.ts'
import type { Seed, SeedToken } from './seed.ts'

export interface NamespaceView {
  namespaceId: string
  gameId: string
  nameId: string
  displayName: string
  versionId: string
  domains: string[]
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

export interface NamespaceRecord {
  id: string
  gameId: string
  nameId: string
  displayName: string
  versionId: string
  domains: string[]
}

export interface GameRecord {
  id: string
  versions: Set<string>
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

  constructor(seed: Seed) {
    this.tokens = new Map(seed.tokens.map((token) => [token.token, structuredClone(token)]))
    this.groups = new Set(seed.groups ?? [])
    for (const game of structuredClone(seed.games)) {
      this.games.set(game.id, {
        id: game.id,
        versions: new Set(game.versions),
        namespaces: (game.namespaces ?? []).map((namespace) => ({
          id: namespace.id,
          gameId: game.id,
          nameId: namespace.nameId,
          displayName: namespace.displayName,
          versionId: namespace.versionId,
          domains: namespace.domains ?? [],
        })),
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

  namespace(game: GameRecord, namespaceId: string): NamespaceRecord | undefined {
    return game.namespaces.find((namespace) => namespace.id === namespaceId)
  }

  isGroupNameTaken(displayName: string): boolean {
    return this.groups.has(displayName)
  }

  isDomainTaken(domain: string): boolean {
    for (const game of this.games.values()) {
      if (game.namespaces.some((namespace) => namespace.domains.includes(domain))) return true
    }
    return false
  }

  createNamespace(game: GameRecord, displayName: string, nameId: string, versionId: string): string {
    const id = randomUUID()
    game.namespaces.push({ id, gameId: game.id, nameId, displayName, versionId, domains: [] })
    return id
  }

  addDomain(namespace: NamespaceRecord, domain: string): void {
    namespace.domains.push(domain)
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
      domains: [...namespace.domains],
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
