import { request, type Dispatcher } from 'undici'
import { NetworkError, UnexpectedAnswerError, type Concern, type Explain } from './errors.ts'
import { errorCodes, isConnectFailure, isUnreachable } from '../common/network.ts'
import { retryPolicy, withRetries, type RetryPolicy, type RetryVerdict } from '../common/retry.ts'
import type * as Api from './types.ts'
import { DEFAULT_REQUEST_TIMEOUT_SECONDS, timeoutsFor, type Timeouts } from '../common/timeouts.ts'
import type { Logger } from '../common/logger.ts'
import { OPS, classify, shouldRetry, type Operation } from './operations.ts'
import {
  ANSWER_BYTES_LIMIT,
  DeadlineError,
  USER_AGENT,
  answerOf,
  networkReason,
  readAnswer,
  type Exchange,
} from './http.ts'

export interface ClientOptions {
  baseUrl: string
  token: string
  dispatcher: Dispatcher
  logger: Pick<Logger, 'info' | 'debug'>
  retry?: RetryPolicy
  /** Default: those of the default `request-timeout`. */
  timeouts?: Pick<Timeouts, 'apiStallMs' | 'apiDeadlineMs'>
  signal?: AbortSignal
  /** Default ANSWER_BYTES_LIMIT; a larger answer fails the call. */
  maxAnswerBytes?: number
  explain?: Explain
}

/**
 * Retries of a connection not made before the service has answered in this run. A refused first
 * call is almost always a wrong base URL (its port), which 8 retries over a minute would only hide; a
 * couple of quick ones still cover a service a second late. Once it has answered, it is an outage.
 */
export const FIRST_CONTACT_RETRIES = 2
const FIRST_CONTACT_MS = 5_000

const seg = encodeURIComponent
const gamePath = (gameId: string) => `/cloud/games/${seg(gameId)}`
const nsPath = (gameId: string, namespaceId: string) => `${gamePath(gameId)}/namespaces/${seg(namespaceId)}`

export class ServiceClient {
  readonly #options: ClientOptions
  readonly #base: string
  readonly #retry: RetryPolicy
  readonly #timeouts: Pick<Timeouts, 'apiStallMs' | 'apiDeadlineMs'>
  readonly #explain: Explain
  /** Any answer (any HTTP status): the base URL is right. */
  #answered = false

  constructor(options: ClientOptions) {
    this.#options = options
    this.#base = options.baseUrl.replace(/\/+$/, '')
    this.#retry = options.retry ?? retryPolicy()
    this.#timeouts = options.timeouts ?? timeoutsFor(DEFAULT_REQUEST_TIMEOUT_SECONDS * 1000)
    if (options.signal) this.#retry = { ...this.#retry, signal: options.signal }
    this.#explain = options.explain ?? (() => undefined)
  }

  /** Never the whole URL, whose user info could be a credential. */
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
    query: Api.ListServersQuery = {},
  ): Promise<Api.ListServersResponse> {
    const params = new URLSearchParams()
    if (query.tags) params.set('tags_json', JSON.stringify(query.tags))
    if (query.includeDestroyed !== undefined) params.set('include_destroyed', String(query.includeDestroyed))
    if (query.cursor) params.set('cursor', query.cursor)
    const qs = params.size ? `?${params.toString()}` : ''
    return this.#call(
      OPS.listServers,
      `/games/${seg(gameId)}/environments/${seg(environmentId)}/servers${qs}`,
    )
  }

  getNamespaceLobby(gameId: string, namespaceId: string, lobbyId: string): Promise<Api.GetLobbyResponse> {
    return this.#call(OPS.getNamespaceLobby, `${nsPath(gameId, namespaceId)}/logs/lobbies/${seg(lobbyId)}`)
  }

  validateMatchmakerConfig(
    gameId: string,
    namespaceId: string,
    config: Api.MatchmakerConfig,
  ): Promise<Api.ValidateResponse> {
    return this.#call(
      OPS.validateMatchmakerConfig,
      `${nsPath(gameId, namespaceId)}/mm-config/validate`,
      config,
    )
  }

  listCustomAvatars(gameId: string): Promise<Api.ListAvatarsResponse> {
    return this.#call(OPS.listCustomAvatars, `${gamePath(gameId)}/avatars`)
  }

  createNamespace(gameId: string, body: Api.CreateNamespaceRequest): Promise<Api.CreateNamespaceResponse> {
    return this.#call(OPS.createNamespace, `${gamePath(gameId)}/namespaces`, body)
  }

  validateGroup(displayName: string): Promise<Api.ValidateResponse> {
    return this.#call(OPS.validateGroup, '/cloud/groups/validate', { display_name: displayName })
  }

  async addNamespaceDomain(gameId: string, namespaceId: string, domain: string): Promise<void> {
    await this.#call(OPS.addNamespaceDomain, `${nsPath(gameId, namespaceId)}/domains`, { domain })
  }

  /** Its namespaces and versions, oldest first. */
  getGame(gameId: string): Promise<Api.GetGameResponse> {
    return this.#call(OPS.getGame, gamePath(gameId))
  }

  getNamespace(gameId: string, namespaceId: string): Promise<Api.GetNamespaceResponse> {
    return this.#call(OPS.getNamespace, nsPath(gameId, namespaceId))
  }

  async removeNamespaceDomain(gameId: string, namespaceId: string, domain: string): Promise<void> {
    await this.#call(OPS.removeNamespaceDomain, `${nsPath(gameId, namespaceId)}/domains/${seg(domain)}`)
  }

  /** Adds a user of the namespace's basic auth, or replaces the one of that name. */
  async updateNamespaceCdnAuthUser(
    gameId: string,
    namespaceId: string,
    body: Api.CdnAuthUserRequest,
  ): Promise<void> {
    await this.#call(OPS.updateNamespaceCdnAuthUser, `${nsPath(gameId, namespaceId)}/auth-user`, body)
  }

  async setNamespaceCdnAuthType(
    gameId: string,
    namespaceId: string,
    authType: Api.CdnAuthType,
  ): Promise<void> {
    await this.#call(OPS.setNamespaceCdnAuthType, `${nsPath(gameId, namespaceId)}/cdn-auth`, {
      auth_type: authType,
    })
  }

  async removeNamespaceCdnAuthUser(gameId: string, namespaceId: string, user: string): Promise<void> {
    await this.#call(OPS.removeNamespaceCdnAuthUser, `${nsPath(gameId, namespaceId)}/auth-user/${seg(user)}`)
  }

  getVersion(gameId: string, versionId: string): Promise<{ version: Api.GameVersion }> {
    return this.#call(OPS.getVersion, `${gamePath(gameId)}/versions/${seg(versionId)}`)
  }

  /** The service's verdict on a version it would be asked to create: its error paths, nothing created. */
  validateVersion(gameId: string, body: Api.CreateVersionRequest): Promise<Api.ValidateResponse> {
    return this.#call(OPS.validateVersion, `${gamePath(gameId)}/versions/validate`, body)
  }

  /** A display name no version of the game has yet. */
  reserveVersionName(gameId: string): Promise<{ version_display_name: string }> {
    return this.#call(OPS.reserveVersionName, `${gamePath(gameId)}/versions/reserve-name`, {})
  }

  createVersion(gameId: string, body: Api.CreateVersionRequest): Promise<{ version_id: string }> {
    return this.#call(OPS.createVersion, `${gamePath(gameId)}/versions`, body)
  }

  /** Publishes a version to a namespace: what the namespace serves from then on. */
  async setNamespaceVersion(gameId: string, namespaceId: string, versionId: string): Promise<void> {
    await this.#call(OPS.setNamespaceVersion, `${nsPath(gameId, namespaceId)}/version`, {
      version_id: versionId,
    })
  }

  /** What was published to the namespace, newest first (creating a namespace records nothing). */
  getNamespaceVersionHistory(gameId: string, namespaceId: string): Promise<Api.NamespaceVersionHistory> {
    return this.#call(
      OPS.getNamespaceVersionHistory,
      `${nsPath(gameId, namespaceId)}/version-history?limit=32`,
    )
  }

  bootstrap(): Promise<Api.BootstrapResponse> {
    return this.#call(OPS.bootstrap, '/cloud/bootstrap')
  }

  createCdnSite(gameId: string, body: Api.CreateCdnSiteRequest): Promise<Api.CreateCdnSiteResponse> {
    return this.#call(OPS.createCdnSite, `${gamePath(gameId)}/cdn/sites`, body)
  }

  /** Assembles the uploaded parts; not in the interface document, but the real service needs it. */
  async completeUpload(uploadId: string): Promise<void> {
    await this.#call(OPS.completeUpload, `/cloud/uploads/${seg(uploadId)}/complete`)
  }

  #call<T>(op: Operation, path: string, body?: unknown): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
    const beforeFirstContact = (error: unknown) => !this.#answered && isConnectFailure(error)
    let firstContact: { retries: number; started: number } | undefined
    const retry = (error: unknown, now: number): RetryVerdict => {
      if (!beforeFirstContact(error)) return classify(op, error, now)
      firstContact ??= { retries: 0, started: this.#retry.now() }
      // Never a retry after a 15 s connect time-out.
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
      async () => {
        this.#options.logger.debug(`${op.method} ${path.split('?')[0]}`)
        return answerOf<T>(op, await this.#exchange(op, path, payload), this.#explain)
      },
      retry,
      this.#retry,
      this.#options.logger,
      (error) =>
        beforeFirstContact(error)
          ? Math.min(FIRST_CONTACT_RETRIES, this.#retry.retries)
          : this.#retry.retries,
    )
  }

  async #exchange(op: Operation, path: string, payload: Buffer | undefined): Promise<Exchange> {
    const { apiStallMs: timeout, apiDeadlineMs: deadline } = this.#timeouts
    // headersTimeout and bodyTimeout are per event (a byte re-arms them); this ends the call as a whole.
    const overdue = new AbortController()
    const clock = setTimeout(() => overdue.abort(new DeadlineError(deadline)), deadline)
    const signal = this.#options.signal
      ? AbortSignal.any([this.#options.signal, overdue.signal])
      : overdue.signal
    try {
      const response = await request(this.#base + path, {
        method: op.method,
        headers: {
          authorization: `Bearer ${this.#options.token}`,
          accept: 'application/json',
          'user-agent': USER_AGENT,
          ...(payload && { 'content-type': 'application/json', 'content-length': String(payload.length) }),
        },
        body: payload,
        dispatcher: this.#options.dispatcher,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        signal,
      })
      this.#answered = true
      return {
        response,
        text: await readAnswer(op, response, this.#options.maxAnswerBytes ?? ANSWER_BYTES_LIMIT),
      }
    } catch (caught) {
      if (this.#options.signal?.aborted) throw this.#options.signal.reason
      if (caught instanceof UnexpectedAnswerError) throw caught
      // Whatever undici made of the abort, a call past its deadline says so.
      throw this.#networkError(op, overdue.signal.aborted ? overdue.signal.reason : caught)
    } finally {
      clearTimeout(clock)
    }
  }

  #networkError(op: Operation, error: unknown): NetworkError {
    // Nothing at the base URL ever answered this run: the likeliest cause is the base URL itself.
    const concern: Concern | undefined =
      !this.#answered && isUnreachable(error) ? { about: 'base-url', problem: 'unreached' } : undefined
    return new NetworkError(
      `${op.name} failed: ${networkReason(error, this.#timeouts.apiStallMs)} (${this.#host()})`,
      { cause: error, ...(concern && { concern, ...this.#explain(concern) }) },
    )
  }
}
