// The CDN: each namespace's live version's site, served by the request's Host on the API's port, at
// `{game}--{namespace}.{cdn domain}`, `{game}.{cdn domain}` for the namespace named `prod`, and at
// each of the namespace's verified custom domains, each behind the namespace's basic auth when it has one. The highest-priority of the version's first 10
// routes whose glob matches the path adds its header(s); then the page layer has its say on pages.
// What a host serves is the namespace's live version (cdn-config.ts), which lags behind a publish.

import { validateHeaderName, validateHeaderValue, type IncomingMessage, type ServerResponse } from 'node:http'
import { CDN_SERVED_MAX, isPage } from '../api/versions.ts'
import { routeForPath } from './version-rules.ts'
import { cdnAuthorized, sendUnauthorized } from './cdn-auth.ts'
import type { EmulatorCore } from './core.ts'
import { drain, sendText } from './http.ts'
import type { EmulatorState, GameRecord, NamespaceRecord } from './state.ts'
import { sendSiteFile } from './static-sites.ts'

export interface CdnNamespace {
  game: GameRecord
  namespace: NamespaceRecord
}

/** The namespace's own host name on the CDN domain. */
export function namespaceHost(game: GameRecord, namespace: NamespaceRecord, cdnDomain: string): string {
  return `${game.nameId}--${namespace.nameId}.${cdnDomain}`
}

/** The host a custom domain's CNAME must name: `{game}.{cdn domain}` for `prod`, else its own host. */
export function cdnHostOf(game: GameRecord, namespace: NamespaceRecord, cdnDomain: string): string {
  return namespace.nameId === 'prod'
    ? `${game.nameId}.${cdnDomain}`
    : namespaceHost(game, namespace, cdnDomain)
}

/** Every host name the namespace's site is served at: a pending custom domain is not. */
function namespaceHosts(game: GameRecord, namespace: NamespaceRecord, cdnDomain: string): string[] {
  return [
    namespaceHost(game, namespace, cdnDomain),
    ...(namespace.nameId === 'prod' ? [`${game.nameId}.${cdnDomain}`] : []),
    ...namespace.domains.filter((entry) => entry.verified).map((entry) => entry.domain),
  ]
}

/** The request's Host, lowercased, without its port or a trailing dot; undefined without one. */
export function requestHost(req: IncomingMessage): string | undefined {
  const host = req.headers.host?.trim().toLowerCase()
  if (!host) return undefined
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d*$/, '')
  return name.replace(/\.$/, '')
}

/** The namespace whose site a host name serves, if any. */
export function namespaceForHost(
  state: EmulatorState,
  host: string | undefined,
  cdnDomain: string,
): CdnNamespace | undefined {
  if (host === undefined) return undefined
  for (const game of state.allGames()) {
    for (const namespace of game.namespaces) {
      if (namespaceHosts(game, namespace, cdnDomain).includes(host)) return { game, namespace }
    }
  }
  return undefined
}

/**
 * Answers a request to a namespace's host from its live version's site; a private namespace's hosts
 * first ask for a user's credentials (cdn-auth.ts). `segments` are the decoded
 * path segments (undefined when the path is not valid percent-encoding). Only GET and HEAD reach the
 * CDN: anything else is 404, as is a namespace whose version names no completed site.
 */
export async function serveNamespaceSite(
  core: EmulatorCore,
  req: IncomingMessage,
  res: ServerResponse,
  { game, namespace }: CdnNamespace,
  segments: readonly string[] | undefined,
): Promise<void> {
  if (!(await cdnAuthorized(namespace.liveAuth, req.headers.authorization))) return sendUnauthorized(req, res)
  const live = namespace.liveVersionId
  const cdn = live === undefined ? undefined : game.versions.get(live)?.config.cdn
  if ((req.method !== 'GET' && req.method !== 'HEAD') || !segments || !cdn) {
    await drain(req)
    sendText(res, 404, '404 page not found\n')
    return
  }
  const path = `/${segments.join('/')}`
  const route = routeForPath(cdn.routes, path)
  const headers = core.options.pageLayer ? withPageLayer(path, routeHeaders(route)) : routeHeaders(route)
  await sendSiteFile(core, req, res, core.state.siteById(cdn.siteId), path.slice(1), headers)
}

/** Headers the CDN's fixed page layer removes from pages, after the routes' headers. */
const PAGE_REMOVED_HEADERS = ['content-security-policy', 'x-frame-options', 'x-xss-protection']
export const PAGE_CACHE_CONTROL = 'no-cache, no-store'

/**
 * The page layer: on a page the CDN sets `Cache-Control: no-cache, no-store` and removes
 * Content-Security-Policy, X-Frame-Options and X-XSS-Protection, whatever the routes added.
 */
function withPageLayer(path: string, headers: Record<string, string>): Record<string, string> {
  if (!isPage(path)) return headers
  const layered: Record<string, string> = { ...headers, 'cache-control': PAGE_CACHE_CONTROL }
  for (const name of PAGE_REMOVED_HEADERS) delete layered[name]
  return layered
}

function routeHeaders(route: { headers: ReadonlyArray<{ name: string; value: string }> } | undefined) {
  const headers: Record<string, string> = {}
  for (const { name, value } of route?.headers.slice(0, CDN_SERVED_MAX) ?? []) {
    // A header Node cannot send (the service lets any name through), or one that would break the
    // answer's framing, is left out.
    if (/^(content-length|transfer-encoding|connection)$/i.test(name)) continue
    try {
      validateHeaderName(name)
      validateHeaderValue(name, value)
      headers[name.toLowerCase()] = value
    } catch {
      continue
    }
  }
  return headers
}
