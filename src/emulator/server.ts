// The emulator's HTTP servers: the service's API, the served sites (the namespaces' live sites by
// Host, as the CDN serves them, and any completed site under /_sites/) and the error documentation
// on one port; the object store of presigned uploads on another (its own origin, as on the real
// service).

import { randomUUID } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { RAY_ID_HEADER, type ServiceErrorBody } from '../api/types.ts'
import { authenticate, authorizeGame } from './auth.ts'
import { discardBody, readJsonBody, type JsonObject } from './body.ts'
import { namespaceForHost, namespaceHost, requestHost, serveNamespaceSite } from './cdn-hosts.ts'
import type { ApiRoute, EmulatorCore } from './core.ts'
import { ApiError, ERROR_KINDS, internalError, isErrorCode } from './errors.ts'
import { CdnConfigs } from './cdn-config.ts'
import { FaultInjector, checkScriptRoutes, mulberry32, type FaultCounters, type FaultKind } from './faults.ts'
import { drain, pathSegments, requestTarget, sendJson, sendText, type RequestTarget } from './http.ts'
import { resolveOptions, type EmulatorOptions } from './options.ts'
import { PartSigner } from './presign.ts'
import { RateLimiter } from './rate-limit.ts'
import { API_ROUTES, routeKeys } from './routes/index.ts'
import { matchRoute } from './router.ts'
import { checkSeed } from './seed.ts'
import { EmulatorState, type NamespaceView, type SiteView } from './state.ts'
import { PartStorage } from './storage.ts'
import { serveSiteFile, SITES_PREFIX } from './static-sites.ts'
import { handleStorePut, refuse } from './store.ts'

export interface RecordedRequest {
  method: string
  /** Without the query string. */
  path: string
  /** 499 when the client closed the connection before an answer was sent. */
  status: number
  /** The fault injected into this request, if any (see EmulatorOptions.faults). */
  fault?: FaultKind
  /** A store PUT of a multipart upload's part: its `partNumber` (from 1). */
  partNumber?: number
}

export interface Emulator {
  /** 'http://127.0.0.1:PORT', no trailing slash. */
  url: string
  /** The object store's origin, where presigned URLs point: 'http://127.0.0.1:OTHER_PORT'. */
  storeUrl: string
  /** Stops the server (idle keep-alive sockets too) and removes the default storage dir. */
  close(): Promise<void>
  /** Every request so far. */
  requests: ReadonlyArray<RecordedRequest>
  /** How many faults were injected so far (all 0 without EmulatorOptions.faults); a fresh copy each read. */
  readonly faults: Readonly<FaultCounters>
  namespaces(gameId: string): NamespaceView[]
  site(siteId: string): SiteView | undefined
  sites(gameId: string): SiteView[]
  /** The assembled bytes of a completed site's file; throws if the site is not completed. */
  readUploadedFile(siteId: string, path: string): Promise<Buffer>
  /** `${url}/_sites/${siteId}/` */
  siteUrl(siteId: string): string
  /** The CDN domain the namespaces' live sites are served under (EmulatorOptions.cdnDomain). */
  cdnDomain: string
  /**
   * `{game name_id}--{namespace name_id}.{cdnDomain}`: a request to the emulator's port with this
   * Host gets the namespace's live site. Throws for an unknown game or namespace.
   */
  namespaceHost(gameId: string, namespaceId: string): string
  /** `http://${namespaceHost}:${port}/`, for a browser on this machine (the default cdnDomain). */
  namespaceUrl(gameId: string, namespaceId: string): string
  /**
   * Marks a custom domain verified wherever it is attached (as its DNS getting its CNAME would), so
   * that it is served by Host; the same as `POST /_emulator/domains/{domain}/verify`. Throws when no
   * namespace has it.
   */
  verifyDomain(domain: string): void
  /** The versions published to a namespace, oldest first (creating the namespace records none). */
  versionHistory(gameId: string, namespaceId: string): Array<{ versionId: string; deployTs: string }>
}

const ERROR_DOCS_PREFIX = '/docs/errors/'
const FORCE_CLOSE_AFTER_MS = 1000
/** A scripted 429 asks to retry this long after now(). */
const SCRIPTED_RETRY_AFTER_MS = 1000

export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const resolved = resolveOptions(options)
  checkScriptRoutes(resolved.faults, routeKeys())
  checkSeed(resolved.seed)
  const state = new EmulatorState(resolved.seed, resolved.now)
  const storage = await PartStorage.open(resolved.storageDir, resolved.discardBytes)
  const core: EmulatorCore = {
    baseUrl: '',
    storeUrl: '',
    options: resolved,
    state,
    signer: new PartSigner(),
    storage,
    limiter: new RateLimiter(),
    faults: new FaultInjector(resolved.faults),
    cdn: new CdnConfigs(resolved.publishDelayMs, resolved.timer),
    routeOrder: mulberry32(resolved.routeOrderSeed),
  }
  const requests: RecordedRequest[] = []
  const { server, storeServer, unused } = await listenBoth(core, requests)
  core.baseUrl = `http://${urlHost(resolved.host)}:${(server.address() as AddressInfo).port}`
  core.storeUrl = `http://${urlHost(resolved.host)}:${(storeServer.address() as AddressInfo).port}`
  let closing: Promise<void> | undefined
  const namespaceOf = (gameId: string, namespaceId: string) => {
    const game = state.game(gameId)
    const namespace = game && state.namespace(game, namespaceId)
    if (!game || !namespace) throw new Error(`game ${gameId} has no namespace ${namespaceId}`)
    return { game, namespace }
  }
  const hostOf = (gameId: string, namespaceId: string) => {
    const { game, namespace } = namespaceOf(gameId, namespaceId)
    return namespaceHost(game, namespace, resolved.cdnDomain)
  }

  return {
    url: core.baseUrl,
    storeUrl: core.storeUrl,
    requests,
    get faults() {
      return core.faults.counters()
    },
    close: () => {
      // Stalled requests would never finish and unused connections never get a request: cut them at once.
      const cutAtOnce = () => {
        core.faults.cutStalled()
        core.cdn.close()
        for (const socket of unused) socket.destroy()
      }
      return (closing ??= Promise.all([stop(server, cutAtOnce), stop(storeServer, cutAtOnce)]).then(() =>
        storage.close(),
      ))
    },
    namespaces: (gameId) => state.namespaceViews(gameId),
    site: (siteId) => state.siteView(siteId),
    sites: (gameId) => state.siteViews(gameId),
    async readUploadedFile(siteId, path) {
      const site = state.siteById(siteId)
      if (!site?.completed) throw new Error(`site ${siteId} is unknown or not completed`)
      const fileIndex = site.files.findIndex((file) => file.path === path)
      if (fileIndex < 0) throw new Error(`site ${siteId} has no file ${JSON.stringify(path)}`)
      return storage.readFile(site.uploadId, fileIndex)
    },
    siteUrl: (siteId) => `${core.baseUrl}${SITES_PREFIX}${siteId}/`,
    cdnDomain: resolved.cdnDomain,
    namespaceHost: hostOf,
    namespaceUrl: (gameId, namespaceId) =>
      `http://${hostOf(gameId, namespaceId)}:${(server.address() as AddressInfo).port}/`,
    verifyDomain(domain) {
      if (!state.verifyDomain(domain.toLowerCase())) throw new Error(`no namespace has the domain ${domain}`)
    },
    versionHistory: (gameId, namespaceId) =>
      namespaceOf(gameId, namespaceId).namespace.history.map((deploy) => ({ ...deploy })),
  }
}

/** The API's server and the store's, listening; `unused` holds connections that sent no request yet. */
async function listenBoth(core: EmulatorCore, requests: RecordedRequest[]) {
  const resolved = core.options
  // Connections that have not sent a request yet: Node's closeIdleConnections() leaves them open.
  const unused = new Set<Socket>()
  const server = createServer((req, res) => {
    unused.delete(req.socket)
    void handleRequest(core, requests, req, res)
  })
  const storeServer = createServer((req, res) => {
    unused.delete(req.socket)
    void handleStoreRequest(core, requests, req, res)
  })
  for (const each of [server, storeServer]) {
    each.on('connection', (socket) => {
      unused.add(socket)
      socket.once('close', () => unused.delete(socket))
    })
  }
  try {
    await listen(server, resolved.port, resolved.host)
    await listen(storeServer, resolved.storePort, resolved.host)
  } catch (error) {
    server.close()
    storeServer.close()
    await core.storage.close()
    throw error
  }
  return { server, storeServer, unused }
}

async function handleRequest(
  core: EmulatorCore,
  requests: RecordedRequest[],
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { id: rayId, path, query } = received(core, requests, req, res, RAY_ID_HEADER)
  try {
    if (core.options.latencyMs > 0) await delay(core.options.latencyMs)
    await dispatch(core, req, res, path, query)
  } catch (error) {
    if (!(error instanceof ApiError)) console.error('gamehost emulator: unexpected error', error)
    if (res.headersSent) {
      res.destroy()
      return
    }
    const apiError = error instanceof ApiError ? error : internalError()
    // An answer that closes the connection leaves the body unread (a body refused for its size).
    if (apiError.headers.connection !== 'close') await drain(req)
    sendApiError(core, res, apiError, rayId)
  }
}

/** The object store's origin: S3's PUT of a presigned URL, nothing else. */
async function handleStoreRequest(
  core: EmulatorCore,
  requests: RecordedRequest[],
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { id: rayId, path, query } = received(core, requests, req, res, 'x-amz-request-id')
  try {
    if (core.options.latencyMs > 0) await delay(core.options.latencyMs)
    if (req.method !== 'PUT') {
      const message = 'The specified method is not allowed against this resource.'
      return await refuse(req, res, { status: 405, code: 'MethodNotAllowed', message }, rayId)
    }
    await handleStorePut(core, req, res, path, query, rayId)
  } catch (error) {
    console.error('gamehost emulator: unexpected error in the object store', error)
    res.destroy()
  }
}

async function dispatch(
  core: EmulatorCore,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
): Promise<void> {
  const method = req.method ?? 'GET'
  const segments = pathSegments(path)
  // A namespace's host is the CDN, whatever the path; any other host is the API.
  const cdnNamespace = namespaceForHost(core.state, requestHost(req), core.options.cdnDomain)
  if (cdnNamespace) return serveNamespaceSite(core, req, res, cdnNamespace, segments)
  if ((method === 'GET' || method === 'HEAD') && path.startsWith(SITES_PREFIX) && segments) {
    return serveSiteFile(core, req, res, segments.slice(1))
  }
  if (segments?.[0] === '_emulator' && segments[1] === 'domains' && segments[3] === 'verify') {
    return verifyDomainRoute(core, req, res, method, segments)
  }
  if (method === 'GET' && path.startsWith(ERROR_DOCS_PREFIX) && segments?.length === 3) {
    return serveErrorDoc(req, res, segments[2] ?? '')
  }
  const match = segments && matchRoute(API_ROUTES, method, segments)
  if (match === 'wrongMethod') {
    throw new ApiError('API_METHOD_NOT_ALLOWED', `Method ${method} is not allowed on this endpoint.`)
  }
  if (!match) throw new ApiError('API_NOT_FOUND', 'The requested endpoint was not found.')

  const token = authenticate(core.state, req.headers.authorization, core.options.now())
  if (match.params.game_id !== undefined) authorizeGame(token, match.params.game_id)
  // Injected faults come before anything is done, the rate limiter's count included.
  const fault = core.faults.decideApi(req, `${match.route.method} ${match.route.pattern}`)
  if (fault === 'reset') {
    res.destroy()
    return
  }
  if (fault === '429') throw rateLimited(core.options.now() + SCRIPTED_RETRY_AFTER_MS)
  if (fault === '503') {
    throw new ApiError('API_SERVICE_UNAVAILABLE', 'The service is temporarily unavailable. Retry later.')
  }
  enforceRateLimit(core, req.socket.remoteAddress ?? '', match.route)
  let body: JsonObject = {}
  if (match.route.method === 'POST' || match.route.method === 'PUT') body = await readJsonBody(req)
  else await discardBody(req)
  const answer = await match.route.handle({ core, params: match.params, query, body, token, req })
  sendJson(res, 200, answer)
}

/**
 * POST /_emulator/domains/{domain}/verify: the emulator's own control, standing for the user's DNS
 * getting its CNAME: the domain turns active and is served by Host. No token needed.
 */
async function verifyDomainRoute(
  core: EmulatorCore,
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  segments: readonly string[],
): Promise<void> {
  await drain(req)
  const domain = (segments[2] ?? '').toLowerCase()
  if (segments.length !== 4) throw new ApiError('API_NOT_FOUND', 'The requested endpoint was not found.')
  if (method !== 'POST') {
    throw new ApiError('API_METHOD_NOT_ALLOWED', `Method ${method} is not allowed on this endpoint.`)
  }
  if (!core.state.verifyDomain(domain)) {
    throw new ApiError('API_NOT_FOUND', `No namespace has the domain "${domain}".`)
  }
  sendJson(res, 200, { domain, verification_status: 'active' })
}

function enforceRateLimit(core: EmulatorCore, address: string, route: ApiRoute): void {
  const { rateLimit, now } = core.options
  if (rateLimit === false) return
  const limit = route.method === 'GET' ? rateLimit.readsPerMinute : rateLimit.writesPerMinute
  const retryAt = core.limiter.take(`${address}\n${route.method} ${route.pattern}`, limit, now())
  if (retryAt === undefined) return
  throw rateLimited(retryAt)
}

/** API_RATE_LIMIT asking to retry at `retryAt` (ms since the epoch): header and metadata. */
function rateLimited(retryAt: number): ApiError {
  const retryAfter = new Date(retryAt).toUTCString()
  return new ApiError('API_RATE_LIMIT', `Too many requests. Retry after ${retryAfter}.`, retryAt, {
    'retry-after': retryAfter,
  })
}

function sendApiError(core: EmulatorCore, res: ServerResponse, error: ApiError, rayId: string): void {
  const body: ServiceErrorBody = {
    code: error.code,
    message: error.message,
    ray_id: rayId,
    documentation: `${core.baseUrl}${ERROR_DOCS_PREFIX}${error.code}`,
  }
  if (error.metadata !== undefined) body.metadata = error.metadata
  sendJson(res, error.status, body, error.headers)
}

async function serveErrorDoc(req: IncomingMessage, res: ServerResponse, code: string): Promise<void> {
  await drain(req)
  if (!isErrorCode(code)) {
    sendText(res, 404, `No documentation for error code ${code}.\n`)
    return
  }
  const { status, doc } = ERROR_KINDS[code]
  sendText(res, 200, `${code} (HTTP ${status})\n\n${doc}\n`)
}

/** A request to either origin: its id (answered in `idHeader`) and target, and its record once answered. */
function received(
  core: EmulatorCore,
  requests: RecordedRequest[],
  req: IncomingMessage,
  res: ServerResponse,
  idHeader: string,
): RequestTarget & { id: string } {
  const id = randomUUID()
  const target = requestTarget(req.url)
  const { path } = target
  res.setHeader(idHeader, id)
  let recorded = false
  const record = (status: number) => {
    if (recorded) return
    recorded = true
    const entry: RecordedRequest = { method: req.method ?? '', path, status }
    const partNumber = new URL(req.url ?? '/', 'http://emulator').searchParams.get('partNumber')
    if (partNumber !== null) entry.partNumber = Number(partNumber)
    const fault = core.faults.kindOf(req)
    if (fault !== undefined) entry.fault = fault
    requests.push(entry)
    core.options.log?.(`${entry.method} ${entry.path} ${entry.status}${fault ? ` (fault: ${fault})` : ''}`)
  }
  res.once('finish', () => record(res.statusCode))
  res.once('close', () => record(res.writableFinished ? res.statusCode : 499))
  return { id, ...target }
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
}

function stop(server: Server, cutAtOnce: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    cutAtOnce()
    // Requests still running get a moment to finish, then their connections are cut.
    const forceClose = setTimeout(() => server.closeAllConnections(), FORCE_CLOSE_AFTER_MS)
    forceClose.unref()
    server.close((error) => {
      clearTimeout(forceClose)
      if (error) reject(error)
      else resolve()
    })
    server.closeIdleConnections()
  })
}

/** The host to put in URLs: a wildcard address is reached through loopback, IPv6 needs brackets. */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1'
  if (host === '::') return '[::1]'
  return host.includes(':') ? `[${host}]` : host
}
