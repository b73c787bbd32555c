import { Agent, EnvHttpProxyAgent, request, type Dispatcher, type ProxyAgent } from 'undici'
import { NetworkError, ServiceError, UnexpectedAnswerError } from './errors.ts'
import {
  aBoolean,
  aHostName,
  aNameId,
  aNumber,
  aString,
  anId,
  anObject,
  listOf,
  objectOf,
  oneOf,
  optional,
  type ShapeCheck,
} from './shape.ts'
import {
  DEADLINE_EXCEEDED,
  errorCodes,
  isConnectFailure,
  isNetworkFailure,
  retryPolicy,
  withRetries,
  type RetryPolicy,
  type RetryVerdict,
} from './retry.ts'
import { siteAnswer, siteAnswerStream, type AnswerStream, type CdnSite } from './site-answer.ts'
import {
  RAY_ID_HEADER,
  type BootstrapResponse,
  type CdnAuthType,
  type CdnAuthUserRequest,
  type CreateCdnSiteRequest,
  type CreateNamespaceRequest,
  type CreateNamespaceResponse,
  type CreateVersionRequest,
  type GameVersion,
  type GetGameResponse,
  type GetLobbyResponse,
  type GetNamespaceResponse,
  type ListAvatarsResponse,
  type ListServersQuery,
  type ListServersResponse,
  type MatchmakerConfig,
  type NamespaceVersionHistory,
  type ServiceErrorBody,
  type ValidateResponse,
} from './types.ts'
import { formatBytes } from '../common/format.ts'
import { timeoutsFor, type Timeouts } from '../common/timeouts.ts'
import { DEFAULT_REQUEST_TIMEOUT_SECONDS, Input } from '../inputs/constants.ts'
import type { Logger } from '../common/logger.ts'
import { redact } from '../common/secrets.ts'
import { inputName } from '../common/input-naming.ts'

export const USER_AGENT = 'gamehost/0.1'
/** The variables that name a proxy, lower case first as curl and @actions/http-client read them. */
const PROXY_VARIABLES = ['https_proxy', 'HTTPS_PROXY', 'http_proxy', 'HTTP_PROXY']

/**
 * One keep-alive connection pool for every call of a run: API calls and part uploads alike. Behind a
 * proxy it goes through the one HTTPS_PROXY / HTTP_PROXY names, except to the hosts NO_PROXY names, as
 * @actions/http-client and curl do; like curl, a plain-http URL is sent to the proxy as is, an https
 * URL through a CONNECT tunnel. (undici 6, which @actions/http-client bundles too, calls that agent
 * experimental and warns once when it is made: so it is made only when a proxy is named.)
 */
export function createAgent(): Agent | EnvHttpProxyAgent {
  const options = { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 120_000, connect: { timeout: 15_000 } }
  if (!PROXY_VARIABLES.some((name) => process.env[name])) return new Agent(options)
  // Handed on to its ProxyAgents (undici 6's types leave proxyTunnel out of EnvHttpProxyAgent's options).
  const proxied: EnvHttpProxyAgent.Options & Pick<ProxyAgent.Options, 'proxyTunnel'> = {
    ...options,
    proxyTunnel: false,
  }
  return new EnvHttpProxyAgent(proxied)
}

export interface ClientOptions {
  baseUrl: string
  token: string
  dispatcher: Dispatcher
  logger: Pick<Logger, 'info' | 'debug'>
  retry?: RetryPolicy
  /**
   * A call that gets no answer, or no further bytes of one, for `apiStallMs` is aborted; one not
   * complete after `apiDeadlineMs`, however steadily its bytes trickle, fails as a lost connection
   * would (a read is retried, a create is not). Default: those of the default `request-timeout`.
   */
  timeouts?: Pick<Timeouts, 'apiStallMs' | 'apiDeadlineMs'>
  onRetry?: (error: unknown) => void
  /** Cancels the run: every request in flight is aborted and none is started. */
  signal?: AbortSignal
  /** The largest answer read (default ANSWER_BYTES_LIMIT); a larger one fails the call. */
  maxAnswerBytes?: number
}

/**
 * How a failed call may be retried. `read`: reads and validations, retried on any transient failure.
 * `create`: calls that create something, retried only where a retry cannot create a duplicate or
 * hide an error (429, 502-504, a connection that failed before the request was sent).
 */
type Safety = 'read' | 'create'

interface Operation {
  name: string
  safety: Safety
  /** What a 500 ERROR most likely means for this call: the service answers an unknown id with it. */
  internalErrorHint?: () => string
  /** The inputs internalErrorHint says to check (every one named in it): see ServiceError.inputs. */
  internalErrorInputs?: readonly string[]
  /** The shape its 200 answer promises; an answer that does not fit fails naming the field. */
  answer?: ShapeCheck
  /** Reads a 200 answer as it arrives instead of as one text (the site's, some MB). */
  stream?: () => AnswerStream
}

/** The largest answer read: a site's presigned requests for 20,000 files are some MB. */
export const ANSWER_BYTES_LIMIT = 128 * 1024 * 1024

const validated = objectOf({ errors: listOf(objectOf({ path: listOf(aString) })) })

export const OPS = {
  listServers: {
    name: 'servers.list',
    safety: 'read',
    internalErrorHint: () =>
      `The service answers this for an unknown id: check ${inputName('environment-id')} (or the paging cursor)`,
    internalErrorInputs: ['environment-id'],
    answer: objectOf({
      servers: listOf(objectOf({ id: anId, created_at: aNumber, tags: anObject })),
    }),
  },
  getNamespaceLobby: {
    name: 'games.namespaces.logs.getNamespaceLobby',
    safety: 'read',
    internalErrorHint: () =>
      `The service answers this for an unknown id: check ${inputName('namespace-id')} and ${inputName('lobby-id')}`,
    internalErrorInputs: ['namespace-id', 'lobby-id'],
    answer: objectOf({ lobby: objectOf({ lobby_id: anId, status: anObject }) }),
  },
  validateMatchmakerConfig: {
    name: 'games.namespaces.validateGameNamespaceMatchmakerConfig',
    safety: 'read',
    internalErrorHint: () => `The service answers this for an unknown id: check ${inputName('namespace-id')}`,
    internalErrorInputs: ['namespace-id'],
    answer: validated,
  },
  listCustomAvatars: {
    name: 'games.avatars.listGameCustomAvatars',
    safety: 'read',
    internalErrorHint: () => `The service answers this for an unknown id: check ${inputName('game-id')}`,
    internalErrorInputs: ['game-id'],
    answer: objectOf({
      custom_avatars: listOf(
        objectOf({ upload_id: anId, display_name: aString, content_length: aNumber, complete: aBoolean }),
      ),
    }),
  },
  createNamespace: {
    name: 'games.namespaces.createGameNamespace',
    safety: 'create',
    internalErrorHint: () => `The service answers this for an unknown id: check ${inputName('version-id')}`,
    internalErrorInputs: ['version-id'],
    answer: objectOf({ namespace_id: anId }),
  },
  validateGroup: {
    name: 'groups.validate',
    safety: 'read',
    internalErrorHint: () => `The service could not check the name: check ${inputName('group-display-name')}`,
    internalErrorInputs: ['group-display-name'],
    answer: validated,
  },
  addNamespaceDomain: {
    name: 'games.namespaces.addNamespaceDomain',
    safety: 'create',
    internalErrorHint: () =>
      `The service answers this for an unknown namespace, or a domain the namespace already has: check ${inputName('namespace-id')} (or ${inputName('namespace')}) and ${inputName('domain')}`,
    internalErrorInputs: ['namespace-id', 'namespace', 'domain'],
  },
  createCdnSite: {
    name: 'games.cdn.createGameCdnSite',
    safety: 'create',
    internalErrorHint: () =>
      `The service answers this for a site display name it refuses or a file path given twice: check ${inputName('site-name')} and ${inputName('files')}`,
    internalErrorInputs: ['site-name', 'files'],
    answer: siteAnswer,
    stream: siteAnswerStream,
  },
  getGame: {
    name: 'games.getGameById',
    safety: 'read',
    internalErrorHint: () => `The service answers this for an unknown id: check ${inputName('game-id')}`,
    internalErrorInputs: ['game-id'],
    answer: objectOf({
      // The name ids make the host name of the url output: only a name id's characters.
      game: objectOf({
        name_id: aNameId,
        namespaces: listOf(objectOf({ namespace_id: anId, name_id: aNameId })),
        versions: listOf(objectOf({ version_id: anId, display_name: aString, create_ts: aString })),
      }),
    }),
  },
  getNamespace: {
    name: 'games.namespaces.getGameNamespaceById',
    safety: 'read',
    internalErrorHint: () => `The service answers this for an unknown id: check ${inputName('namespace-id')}`,
    internalErrorInputs: ['namespace-id'],
    answer: objectOf({
      namespace: objectOf({
        namespace_id: anId,
        config: objectOf({
          cdn: objectOf({
            domains: listOf(
              objectOf({
                domain: aString,
                verification_status: optional(aString),
                verification_method: optional(
                  objectOf({ http: optional(objectOf({ cname_record: aHostName })) }),
                ),
              }),
            ),
            auth_type: optional(oneOf(['basic', 'none'])),
            auth_user_list: optional(listOf(objectOf({ user: aString }))),
          }),
        }),
      }),
    }),
  },
  // Removing a domain twice removes nothing the second time.
  removeNamespaceDomain: {
    name: 'games.namespaces.removeNamespaceDomain',
    safety: 'read',
    internalErrorHint: () => `The service answers this for an unknown id: check ${inputName('namespace-id')}`,
    internalErrorInputs: ['namespace-id'],
    answer: anObject,
  },
  // Adding a user replaces one of the same name: safe to repeat.
  updateNamespaceCdnAuthUser: {
    name: 'cloud.games.namespaces.updateNamespaceCdnAuthUser',
    safety: 'read',
    internalErrorHint: () => `The service answers this for an unknown id: check ${inputName('namespace-id')}`,
    internalErrorInputs: ['namespace-id'],
    answer: anObject,
  },
  setNamespaceCdnAuthType: {
    name: 'cloud.games.namespaces.setNamespaceCdnAuthType',
    safety: 'read',
    internalErrorHint: () => `The service answers this for an unknown id: check ${inputName('namespace-id')}`,
    internalErrorInputs: ['namespace-id'],
    answer: anObject,
  },
  // Removing a user twice removes nothing the second time.
  removeNamespaceCdnAuthUser: {
    name: 'cloud.games.namespaces.removeNamespaceCdnAuthUser',
    safety: 'read',
    internalErrorHint: () => `The service answers this for an unknown id: check ${inputName('namespace-id')}`,
    internalErrorInputs: ['namespace-id'],
    answer: anObject,
  },
  getVersion: {
    name: 'games.versions.getGameVersionById',
    safety: 'read',
    internalErrorHint: () => `The service answers this for an unknown id: check ${inputName('version-id')}`,
    internalErrorInputs: ['version-id'],
    answer: objectOf({
      version: objectOf({ version_id: anId, display_name: aString, create_ts: aString, config: anObject }),
    }),
  },
  validateVersion: {
    name: 'games.versions.validateGameVersion',
    safety: 'read',
    internalErrorHint: () =>
      `The service could not read the config it was given: check ${inputName('version-id')} (the version the new one is made from) and ${inputName('headers')}`,
    internalErrorInputs: ['version-id', 'headers'],
    answer: validated,
  },
  reserveVersionName: {
    name: 'games.versions.reserveVersionName',
    safety: 'read',
    internalErrorHint: () => `The service answers this for an unknown id: check ${inputName('game-id')}`,
    internalErrorInputs: ['game-id'],
    answer: objectOf({ version_display_name: aString }),
  },
  createVersion: {
    name: 'games.versions.createGameVersion',
    safety: 'create',
    internalErrorHint: () =>
      `The service answers this when the config's cdn.site_id is not a completed site of the game, or a route holds more than one header: check ${inputName('headers')} (one header per glob) and ${inputName('version-id')} (the version the new one is made from)`,
    internalErrorInputs: ['headers', 'version-id'],
    answer: objectOf({ version_id: anId }),
  },
  // Publishing the version a namespace already has changes nothing: safe to repeat.
  setNamespaceVersion: {
    name: 'games.namespaces.updateGameNamespaceVersion',
    safety: 'read',
    internalErrorHint: () =>
      `The service answers this for an unknown id: check ${inputName('namespace-id')} and ${inputName('version-id')}`,
    internalErrorInputs: ['namespace-id', 'version-id'],
    answer: anObject,
  },
  getNamespaceVersionHistory: {
    name: 'games.namespaces.getGameNamespaceVersionHistoryList',
    safety: 'read',
    internalErrorHint: () => `The service answers this for an unknown id: check ${inputName('namespace-id')}`,
    internalErrorInputs: ['namespace-id'],
    answer: objectOf({ versions: listOf(objectOf({ version_id: anId, deploy_ts: aString })) }),
  },
  // What the service says of itself: the domain namespaces are served under (`domains.cdn`).
  bootstrap: {
    name: 'cloud.bootstrap',
    safety: 'read',
    internalErrorHint: () =>
      `The service could not say which domain it serves namespaces under: set ${inputName('cdn-domain')} to that domain`,
    internalErrorInputs: ['cdn-domain'],
    answer: objectOf({ domains: optional(objectOf({ cdn: optional(aHostName) })) }),
  },
  // Completing twice is harmless: the service assembles the same parts again.
  completeUpload: {
    name: 'uploads.complete',
    safety: 'read',
    internalErrorHint: () =>
      `The service answers this when the upload is unknown or a part of it is missing: check that nothing changed the ${inputName('files')} under path during the upload`,
    internalErrorInputs: ['path'],
  },
} as const satisfies Record<string, Operation>

function shouldRetry(op: Operation, error: unknown): boolean {
  if (error instanceof ServiceError) {
    if ([429, 502, 503, 504].includes(error.status)) return true
    if (op.safety === 'create') return false
    // 500 ERROR is how the service answers an unknown id: retrying cannot help.
    return error.status === 408 || (error.status >= 500 && error.code !== 'ERROR')
  }
  return op.safety === 'create' ? isConnectFailure(error) : isNetworkFailure(error)
}

/**
 * What the service's refusals of the token mean, and the inputs to fix: a malformed, missing or
 * expired token is the `token`'s fault; a token that may not act on the game (or a game that does not
 * exist) is `game-id`'s, or the token's.
 */
const AUTH_HINTS: Record<string, { hint: () => string; inputs: readonly string[] }> = {
  TOKEN_INVALID: {
    hint: () =>
      `The service does not know this token (mistyped, cut short, or revoked): check ${inputName('token')}`,
    inputs: ['token'],
  },
  API_UNAUTHORIZED: {
    hint: () =>
      `The service got no bearer token it could read: check ${inputName('token')} (an empty or missing secret?)`,
    inputs: ['token'],
  },
  CLAIMS_ENTITLEMENT_EXPIRED: {
    hint: () => `The token has expired: make a new one and put it in ${inputName('token')}`,
    inputs: ['token'],
  },
  API_FORBIDDEN: {
    hint: () =>
      'The token does not grant access to this game (a token of another game, or a game that does not exist): ' +
      `check ${inputName('game-id')}, and that ${inputName('token')} is a token of that game`,
    inputs: ['game-id', 'token'],
  },
}

const NO_ROUTE_HINT = {
  hint: () =>
    `The service has no such route: ${inputName(Input.ApiUrl)} has a path it should not have (every call adds /cloud/...). ` +
    `Check ${inputName(Input.ApiUrl)}: the base URL of the service's API, such as https://api.example.com`,
  inputs: [Input.ApiUrl],
}

/** The hint and the inputs to fix of a refusal: the token's, the operation's unknown id, or api-url's path. */
function refusalHint(
  op: Operation,
  status: number,
  code: string,
): { hint?: string; inputs?: readonly string[] } {
  if (status === 500 && code === 'ERROR')
    return { hint: op.internalErrorHint?.(), inputs: op.internalErrorInputs }
  // Every id in a path is checked as a UUID first: the service knowing no such route is api-url's path.
  if (status === 404 && code === 'API_NOT_FOUND')
    return { hint: NO_ROUTE_HINT.hint(), inputs: NO_ROUTE_HINT.inputs }
  const auth = (status === 400 || status === 401 || status === 403) && Object.hasOwn(AUTH_HINTS, code)
  return auth ? { hint: AUTH_HINTS[code]!.hint(), inputs: AUTH_HINTS[code]!.inputs } : {}
}

/**
 * Retries of a connection that cannot be made before anything of the service has answered in this
 * run: at most this many, within FIRST_CONTACT_MS. A refused connection on the first call is almost
 * always a wrong api-url (its port, above all), which 8 retries over a minute would only hide; a
 * couple of quick retries still cover a service that is a second late. Once the service has answered,
 * a connection that cannot be made is an outage, and gets the ordinary retries.
 */
export const FIRST_CONTACT_RETRIES = 2
export const FIRST_CONTACT_MS = 5_000

/** A failure to reach the host at all: refused, unreachable, not resolved, no TLS handshake. */
function isUnreachable(error: unknown): boolean {
  return (
    isConnectFailure(error) ||
    errorCodes(error).some(
      (code) =>
        code === 'ENOTFOUND' || /^(ERR_SSL|ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(code),
    )
  )
}

const seg = encodeURIComponent

/** The service's HTTP API: one method per operation, bearer auth, JSON bodies of known length. */
export class ServiceClient {
  readonly #options: ClientOptions
  readonly #base: string
  readonly #retry: RetryPolicy
  readonly #timeouts: Pick<Timeouts, 'apiStallMs' | 'apiDeadlineMs'>
  /** Something of the service answered a call of this client (any HTTP status): api-url is right. */
  #answered = false

  constructor(options: ClientOptions) {
    this.#options = options
    this.#base = options.baseUrl.replace(/\/+$/, '')
    this.#retry = options.retry ?? retryPolicy()
    this.#timeouts = options.timeouts ?? timeoutsFor(DEFAULT_REQUEST_TIMEOUT_SECONDS * 1000)
    if (options.signal) this.#retry = { ...this.#retry, signal: options.signal }
  }

  /** The service's host, for messages: never the whole URL, whose user info could be a credential. */
  #host(): string {
    try {
      return new URL(this.#base).host
    } catch {
      return 'the service'
    }
  }

  listServers(
    gameId: string,
    environmentId: string,
    query: ListServersQuery = {},
  ): Promise<ListServersResponse> {
    const params = new URLSearchParams()
    if (query.tags) params.set('tags_json', JSON.stringify(query.tags))
    if (query.includeDestroyed !== undefined) params.set('include_destroyed', String(query.includeDestroyed))
    if (query.cursor) params.set('cursor', query.cursor)
    const qs = params.size ? `?${params.toString()}` : ''
    return this.#call(
      OPS.listServers,
      'GET',
      `/games/${seg(gameId)}/environments/${seg(environmentId)}/servers${qs}`,
    )
  }

  getNamespaceLobby(gameId: string, namespaceId: string, lobbyId: string): Promise<GetLobbyResponse> {
    return this.#call(
      OPS.getNamespaceLobby,
      'GET',
      `/cloud/games/${seg(gameId)}/namespaces/${seg(namespaceId)}/logs/lobbies/${seg(lobbyId)}`,
    )
  }

  validateMatchmakerConfig(
    gameId: string,
    namespaceId: string,
    config: MatchmakerConfig,
  ): Promise<ValidateResponse> {
    return this.#call(
      OPS.validateMatchmakerConfig,
      'POST',
      `/cloud/games/${seg(gameId)}/namespaces/${seg(namespaceId)}/mm-config/validate`,
      config,
    )
  }

  listCustomAvatars(gameId: string): Promise<ListAvatarsResponse> {
    return this.#call(OPS.listCustomAvatars, 'GET', `/cloud/games/${seg(gameId)}/avatars`)
  }

  createNamespace(gameId: string, body: CreateNamespaceRequest): Promise<CreateNamespaceResponse> {
    return this.#call(OPS.createNamespace, 'POST', `/cloud/games/${seg(gameId)}/namespaces`, body)
  }

  validateGroup(displayName: string): Promise<ValidateResponse> {
    return this.#call(OPS.validateGroup, 'POST', '/cloud/groups/validate', { display_name: displayName })
  }

  async addNamespaceDomain(gameId: string, namespaceId: string, domain: string): Promise<void> {
    await this.#call(
      OPS.addNamespaceDomain,
      'POST',
      `/cloud/games/${seg(gameId)}/namespaces/${seg(namespaceId)}/domains`,
      { domain },
    )
  }

  /** The game with its namespaces (name_id included) and versions, oldest first. */
  getGame(gameId: string): Promise<GetGameResponse> {
    return this.#call(OPS.getGame, 'GET', `/cloud/games/${seg(gameId)}`)
  }

  /** A namespace with its config, the domains it has included. */
  getNamespace(gameId: string, namespaceId: string): Promise<GetNamespaceResponse> {
    return this.#call(OPS.getNamespace, 'GET', `/cloud/games/${seg(gameId)}/namespaces/${seg(namespaceId)}`)
  }

  async removeNamespaceDomain(gameId: string, namespaceId: string, domain: string): Promise<void> {
    await this.#call(
      OPS.removeNamespaceDomain,
      'DELETE',
      `/cloud/games/${seg(gameId)}/namespaces/${seg(namespaceId)}/domains/${seg(domain)}`,
    )
  }

  /** A version with its whole config. */
  /** Adds a user of the namespace's basic auth, or replaces the one of that name. `password` is a bcrypt hash. */
  async updateNamespaceCdnAuthUser(
    gameId: string,
    namespaceId: string,
    body: CdnAuthUserRequest,
  ): Promise<void> {
    await this.#call(
      OPS.updateNamespaceCdnAuthUser,
      'POST',
      `/cloud/games/${seg(gameId)}/namespaces/${seg(namespaceId)}/auth-user`,
      body,
    )
  }

  /** `basic`: every host of the namespace asks for a user's credentials; `none`: public. */
  async setNamespaceCdnAuthType(gameId: string, namespaceId: string, authType: CdnAuthType): Promise<void> {
    await this.#call(
      OPS.setNamespaceCdnAuthType,
      'PUT',
      `/cloud/games/${seg(gameId)}/namespaces/${seg(namespaceId)}/cdn-auth`,
      { auth_type: authType },
    )
  }

  async removeNamespaceCdnAuthUser(gameId: string, namespaceId: string, user: string): Promise<void> {
    await this.#call(
      OPS.removeNamespaceCdnAuthUser,
      'DELETE',
      `/cloud/games/${seg(gameId)}/namespaces/${seg(namespaceId)}/auth-user/${seg(user)}`,
    )
  }

  getVersion(gameId: string, versionId: string): Promise<{ version: GameVersion }> {
    return this.#call(OPS.getVersion, 'GET', `/cloud/games/${seg(gameId)}/versions/${seg(versionId)}`)
  }

  /** The service's verdict on a version it would be asked to create: its error paths, nothing created. */
  validateVersion(gameId: string, body: CreateVersionRequest): Promise<ValidateResponse> {
    return this.#call(OPS.validateVersion, 'POST', `/cloud/games/${seg(gameId)}/versions/validate`, body)
  }

  /** A display name no version of the game has yet. */
  reserveVersionName(gameId: string): Promise<{ version_display_name: string }> {
    return this.#call(OPS.reserveVersionName, 'POST', `/cloud/games/${seg(gameId)}/versions/reserve-name`, {})
  }

  createVersion(gameId: string, body: CreateVersionRequest): Promise<{ version_id: string }> {
    return this.#call(OPS.createVersion, 'POST', `/cloud/games/${seg(gameId)}/versions`, body)
  }

  /** Publishes a version to a namespace: what the namespace serves from then on. */
  async setNamespaceVersion(gameId: string, namespaceId: string, versionId: string): Promise<void> {
    await this.#call(
      OPS.setNamespaceVersion,
      'PUT',
      `/cloud/games/${seg(gameId)}/namespaces/${seg(namespaceId)}/version`,
      { version_id: versionId },
    )
  }

  /** What was published to the namespace, newest first (creating a namespace records nothing). */
  getNamespaceVersionHistory(
    gameId: string,
    namespaceId: string,
    limit = 32,
  ): Promise<NamespaceVersionHistory> {
    return this.#call(
      OPS.getNamespaceVersionHistory,
      'GET',
      `/cloud/games/${seg(gameId)}/namespaces/${seg(namespaceId)}/version-history?limit=${limit}`,
    )
  }

  /** The service's own settings: `domains.cdn`, the domain namespaces are served under (absent without one). */
  bootstrap(): Promise<BootstrapResponse> {
    return this.#call(OPS.bootstrap, 'GET', '/cloud/bootstrap')
  }

  /** The site's presigned requests come in a compact list (see PresignedRequestList). */
  createCdnSite(gameId: string, body: CreateCdnSiteRequest): Promise<CdnSite> {
    return this.#call(OPS.createCdnSite, 'POST', `/cloud/games/${seg(gameId)}/cdn/sites`, body)
  }

  /** Assembles the uploaded parts; not in the interface document, but the real service needs it. */
  async completeUpload(uploadId: string): Promise<void> {
    await this.#call(OPS.completeUpload, 'POST', `/cloud/uploads/${seg(uploadId)}/complete`)
  }

  #call<T>(
    op: Operation,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
    let firstContact: { retries: number; started: number } | undefined
    const retry = (error: unknown): RetryVerdict => {
      if (this.#answered || !isConnectFailure(error)) return shouldRetry(op, error)
      // Nothing answered yet: a few quick retries, never one after a 15 s connect time-out.
      firstContact ??= { retries: 0, started: this.#retry.now() }
      const again =
        !errorCodes(error).includes('UND_ERR_CONNECT_TIMEOUT') &&
        firstContact.retries < FIRST_CONTACT_RETRIES &&
        this.#retry.now() - firstContact.started < FIRST_CONTACT_MS &&
        shouldRetry(op, error)
      if (again) firstContact.retries++
      else if (firstContact.retries > 0) return { kind: 'retries-spent', attempts: firstContact.retries + 1 }
      return again
    }
    return withRetries(
      op.name,
      () => this.#send<T>(op, method, path, payload),
      retry,
      this.#retry,
      this.#options.logger,
      {
        onRetry: this.#options.onRetry,
        retriesFor: (error) =>
          this.#answered || !isConnectFailure(error)
            ? this.#retry.retries
            : Math.min(FIRST_CONTACT_RETRIES, this.#retry.retries),
      },
    )
  }

  /** One attempt at a call: its answer, or the error it came to. */
  async #send<T>(
    op: Operation,
    method: Dispatcher.HttpMethod,
    path: string,
    payload: Buffer | undefined,
  ): Promise<T> {
    this.#options.logger.debug(`${method} ${path.split('?')[0]}`)
    const exchange = await this.#exchange(op, method, path, payload)
    return answerOf<T>(op, exchange)
  }

  /**
   * The request and its whole answer, read within the call's time limits; a request that got no
   * complete answer fails as a NetworkError naming the operation and the host.
   */
  async #exchange(
    op: Operation,
    method: Dispatcher.HttpMethod,
    path: string,
    payload: Buffer | undefined,
  ): Promise<Exchange> {
    const { apiStallMs: timeout, apiDeadlineMs: deadline } = this.#timeouts
    // headersTimeout and bodyTimeout are per event (a byte re-arms them); this ends the call as a whole.
    const overdue = new AbortController()
    const clock = setTimeout(() => overdue.abort(new DeadlineError(deadline)), deadline)
    const signal = this.#options.signal
      ? AbortSignal.any([this.#options.signal, overdue.signal])
      : overdue.signal
    try {
      const response = await request(this.#base + path, {
        method,
        headers: this.#headers(payload),
        body: payload,
        dispatcher: this.#options.dispatcher,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        signal,
      })
      this.#answered = true
      return { response, ...(await this.#read(op, response)) }
    } catch (caught) {
      if (this.#options.signal?.aborted) throw this.#options.signal.reason
      if (caught instanceof UnexpectedAnswerError) throw caught
      // Whatever undici made of the abort, a call past its deadline says so.
      throw this.#networkError(op, overdue.signal.aborted ? overdue.signal.reason : caught)
    } finally {
      clearTimeout(clock)
    }
  }

  #headers(payload: Buffer | undefined): Record<string, string> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#options.token}`,
      accept: 'application/json',
      'user-agent': USER_AGENT,
    }
    if (payload) {
      headers['content-type'] = 'application/json'
      headers['content-length'] = String(payload.length)
    }
    return headers
  }

  /** The answer's body: streamed into the operation's parser when it has one, else as text. */
  async #read(op: Operation, response: Dispatcher.ResponseData): Promise<Omit<Exchange, 'response'>> {
    const limit = this.#options.maxAnswerBytes ?? ANSWER_BYTES_LIMIT
    const length = header(response.headers, 'content-length')
    if (op.stream && response.statusCode === 200) {
      const stream = op.stream()
      await readBody(response.body, length, op.name, limit, (chunk) => stream.write(chunk))
      return { text: '', streamed: stream.end() }
    }
    return { text: await readText(response.body, length, op.name, limit), streamed: undefined }
  }

  #networkError(op: Operation, error: unknown): NetworkError {
    // Nothing at api-url ever answered this run: the likeliest cause is api-url itself.
    const unreached = !this.#answered && isUnreachable(error)
    const check = unreached
      ? `: nothing at ${inputName(Input.ApiUrl)} has answered in this run; check ${inputName(Input.ApiUrl)} (its host and port)`
      : ''
    return new NetworkError(
      `${op.name} failed: ${networkReason(error, this.#timeouts.apiStallMs)} (${this.#host()})${check}`,
      { cause: error, inputs: unreached ? ['api-url'] : [] },
    )
  }
}

/** A request and its whole answer: the body as text, or what the operation's stream made of it. */
interface Exchange {
  response: Dispatcher.ResponseData
  text: string
  streamed: ReturnType<AnswerStream['end']> | undefined
}

/** What the operation promises, from a 200; a ServiceError for a refusal, or for an answer that is not JSON. */
function answerOf<T>(op: Operation, { response, text, streamed }: Exchange): T {
  const rayId = header(response.headers, RAY_ID_HEADER)
  const unexpected = (problem: string) =>
    new UnexpectedAnswerError(
      `${op.name}: the service's answer is not what the operation promises: ${problem}` +
        (rayId ? ` (ray id ${rayId})` : ''),
    )
  if (streamed && 'problem' in streamed) throw unexpected(streamed.problem)
  const parsed = streamed ? streamed.value : parseJson(text)
  if (response.statusCode === 200 && parsed !== undefined && typeof parsed === 'object' && parsed !== null) {
    const problem = op.answer?.(parsed, '')
    if (problem) throw unexpected(problem)
    return parsed as T
  }
  const errorBody: Partial<ServiceErrorBody> =
    isErrorBody(parsed) && response.statusCode !== 200
      ? parsed
      : {
          code: `HTTP_${response.statusCode}`,
          message:
            response.statusCode === 200
              ? 'the answer was not a JSON object'
              : `the answer was not a service error body: ${redact(text).slice(0, 200) || '(empty)'}`,
        }
  const serviceBody = errorBody === parsed
  throw new ServiceError({
    operation: op.name,
    status: response.statusCode,
    body: errorBody,
    rayId,
    retryAfter: header(response.headers, 'retry-after'),
    ...(serviceBody
      ? refusalHint(op, response.statusCode, errorBody.code ?? '')
      : foreignAnswerHint(response.statusCode, header(response.headers, 'content-type'))),
  })
}

/**
 * An answer that is no answer of the service (an HTML page, a 404 without the service's error body):
 * api-url most likely reaches another server (a web site, a proxy's page, the wrong path). A gateway's
 * page for a 5xx or a 429 is an outage in front of the right server: named, but api-url not blamed.
 */
function foreignAnswerHint(
  status: number,
  contentType: string | undefined,
): { hint?: string; inputs?: readonly string[] } {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
  if (type === 'application/json' && status === 200) return {}
  const what = type === 'text/html' ? 'an HTML page' : type ? `${type}, not the service's JSON` : 'no JSON'
  if (status >= 500 || status === 429)
    return { hint: `The answer is not the service's (${what}): a proxy or gateway in front of it answered` }
  return {
    hint:
      `The answer is not the service's (${what}): ${inputName(Input.ApiUrl)} reaches another server. ` +
      `Check ${inputName(Input.ApiUrl)}: the base URL of the service's API (such as https://api.example.com), not a web page`,
    inputs: [Input.ApiUrl],
  }
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** Hands each chunk of the body to `onChunk`, failing once the answer is larger than `limit`. */
async function readBody(
  body: Dispatcher.ResponseData['body'],
  contentLength: string | undefined,
  operation: string,
  limit: number,
  onChunk: (chunk: Buffer) => void,
): Promise<void> {
  const tooLarge = () => {
    // Destroying the body errors it; nobody reads it any more, so that error must not go uncaught.
    body.on('error', () => {})
    body.destroy()
    return new UnexpectedAnswerError(
      `${operation}: the service's answer is larger than ${formatBytes(limit)}, more than any answer of it can be; not read further`,
    )
  }
  if (Number(contentLength) > limit) throw tooLarge()
  let length = 0
  for await (const chunk of body as AsyncIterable<Buffer>) {
    length += chunk.length
    if (length > limit) throw tooLarge()
    onChunk(chunk)
  }
}

/** The whole body as text, without a byte-order mark, failing once it is larger than `limit`. */
async function readText(
  body: Dispatcher.ResponseData['body'],
  contentLength: string | undefined,
  operation: string,
  limit: number,
): Promise<string> {
  const chunks: Buffer[] = []
  await readBody(body, contentLength, operation, limit, (chunk) => chunks.push(chunk))
  return new TextDecoder().decode(Buffer.concat(chunks))
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

function isErrorBody(value: unknown): value is ServiceErrorBody {
  return typeof value === 'object' && value !== null && typeof (value as { code?: unknown }).code === 'string'
}

/** Why a call was aborted past its deadline: a network failure of its own code (see retry.ts). */
export class DeadlineError extends Error {
  override name = 'DeadlineError'
  readonly code = DEADLINE_EXCEEDED
  constructor(deadlineMs: number) {
    super(`the answer was not complete within ${deadlineMs / 1000} s, the deadline of an API call`)
  }
}

/** What went wrong on the wire, in words, with undici's code: not "Headers Timeout Error". */
function networkReason(error: unknown, timeoutMs: number): string {
  const code = (error as { code?: unknown }).code ?? (error as { cause?: { code?: unknown } }).cause?.code
  const seconds = `${timeoutMs / 1000} s`
  switch (code) {
    case DEADLINE_EXCEEDED:
      return `${(error as Error).message} (${code})`
    case 'UND_ERR_HEADERS_TIMEOUT':
      return `no answer within ${seconds} (${code})`
    case 'UND_ERR_BODY_TIMEOUT':
      return `the answer stopped arriving for ${seconds} (${code})`
    case 'UND_ERR_SOCKET':
    case 'ECONNRESET':
    case 'EPIPE':
      return `the connection was closed before the answer was complete (${code})`
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `could not connect within the connect time-out (${code})`
    case 'ECONNREFUSED':
      return `the connection was refused (${code})`
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host name could not be resolved (${code})`
  }
  if (typeof code === 'string' && /^(ERR_SSL|ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(code))
    return `the TLS handshake failed (${code})`
  const message = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error)
  return typeof code === 'string' ? `${message} (${code})` : message
}
