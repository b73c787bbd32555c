// Namespace routes: create a namespace, read one, add a domain to one and remove it.

import {
  createNamespaceProblems,
  DOMAINS_PER_NAMESPACE_MAX,
  isValidDomain,
  nameIdProblems,
} from '../../api/rules.ts'
import { stringField } from '../body.ts'
import { requireGame, type ApiContext, type ApiRoute } from '../core.ts'
import { ApiError, badBody, internalError, validationError } from '../errors.ts'
import { isUuid } from '../router.ts'
import { cdnHostOf } from '../cdn-hosts.ts'
import { hasDomain, type NamespaceRecord } from '../state.ts'

/** Custom host names a team may hold pending verification at the CDN provider. */
const PENDING_HOSTNAMES_MAX = 10

function isUnderDomain(domain: string, parent: string): boolean {
  return domain === parent || domain.endsWith(`.${parent}`)
}

export function namespaceSummary(namespace: NamespaceRecord) {
  return {
    namespace_id: namespace.id,
    create_ts: namespace.createTs,
    display_name: namespace.displayName,
    version_id: namespace.versionId,
    name_id: namespace.nameId,
  }
}

/** The namespace of the route's namespace_id; an unknown one is the service's 500. */
export function requireNamespace(context: ApiContext): NamespaceRecord {
  const namespace = context.core.state.namespace(requireGame(context), context.params.namespace_id ?? '')
  if (!namespace) throw internalError()
  return namespace
}

// POST /cloud/games/{game_id}/namespaces
export const createGameNamespace: ApiRoute = {
  method: 'POST',
  pattern: '/cloud/games/:game_id/namespaces',
  handle(context) {
    const displayName = stringField(context.body, 'display_name')
    const nameId = stringField(context.body, 'name_id')
    const versionId = stringField(context.body, 'version_id')
    if (!isUuid(versionId)) throw badBody('"version_id" must be a UUID')
    const game = requireGame(context)
    const problems = createNamespaceProblems(displayName, nameId)
    const taken = game.namespaces.some((namespace) => namespace.nameId === nameId)
    if (nameIdProblems(nameId).length === 0 && taken) problems.push(['name-id', 'not-unique'])
    if (problems.length > 0) throw validationError(problems)
    if (!game.versions.has(versionId)) throw internalError()
    const { state, options, cdn } = context.core
    const namespace = state.createNamespace(game, displayName, nameId, versionId)
    // The service queues the CDN config rebuild before the namespace's CDN record exists: unless the
    // race is won (serveOnCreate), the worker finds no record and the namespace serves nothing.
    if (options.serveOnCreate) cdn.rebuild(namespace)
    return { namespace_id: namespace.id }
  },
}

// POST /cloud/games/{game_id}/namespaces/{namespace_id}/domains
export const addNamespaceDomain: ApiRoute = {
  method: 'POST',
  pattern: '/cloud/games/:game_id/namespaces/:namespace_id/domains',
  handle(context) {
    const domain = stringField(context.body, 'domain')
    if (!isValidDomain(domain)) {
      throw new ApiError(
        'CDN_INVALID_DOMAIN',
        `Invalid domain "${domain}": use 1 to 255 characters of a-z, 0-9, "." and "-", without protocol.`,
      )
    }
    const { state, options, cdn } = context.core
    if (isUnderDomain(domain, options.cdnDomain)) {
      throw new ApiError(
        'CDN_INVALID_DOMAIN',
        `Invalid domain "${domain}": a domain under the CDN's own domain ${options.cdnDomain} cannot be added.`,
      )
    }
    const namespace = requireNamespace(context)
    // The real service's insert breaks its primary key: an internal error, not CLOUD_HOSTNAME_TAKEN.
    if (hasDomain(namespace, domain)) throw internalError()
    if (namespace.domains.length >= DOMAINS_PER_NAMESPACE_MAX) {
      throw new ApiError(
        'CDN_TOO_MANY_DOMAINS',
        `A namespace can have at most ${DOMAINS_PER_NAMESPACE_MAX} domains.`,
      )
    }
    if (state.isDomainTaken(domain)) {
      throw new ApiError('CLOUD_HOSTNAME_TAKEN', `The domain "${domain}" is already in use.`)
    }
    const verified = options.verifyDomains === 'at-once'
    if (!verified && state.pendingDomainCount(requireGame(context)) >= PENDING_HOSTNAMES_MAX) {
      throw new ApiError(
        'CLOUD_TOO_MANY_PENDING_HOSTNAMES_FOR_GROUP',
        `Too many pending host names: the team already has ${PENDING_HOSTNAMES_MAX} custom domains waiting for their DNS.`,
      )
    }
    state.addDomain(namespace, domain, verified)
    cdn.rebuild(namespace)
    return {}
  },
}

// GET /cloud/games/{game_id}/namespaces/{namespace_id}: the namespace with its config and domains.
export const getGameNamespaceById: ApiRoute = {
  method: 'GET',
  pattern: '/cloud/games/:game_id/namespaces/:namespace_id',
  handle(context) {
    const namespace = requireNamespace(context)
    const { cdnDomain } = context.core.options
    const cnameRecord = cdnHostOf(requireGame(context), namespace, cdnDomain)
    return {
      namespace: {
        ...namespaceSummary(namespace),
        config: {
          cdn: {
            enable_domain_public_auth: false,
            domains: namespace.domains.map((entry) => ({
              domain: entry.domain,
              create_ts: entry.createTs,
              verification_status: entry.verified ? 'active' : 'pending',
              verification_method: { http: { cname_record: cnameRecord } },
              verification_errors: [],
            })),
            auth_type: namespace.authType,
            auth_user_list: [...namespace.authUsers.keys()].map((user) => ({ user })),
          },
          matchmaker: {
            lobby_count_max: 256,
            max_players_per_client: 4,
            max_players_per_client_vpn: 4,
            max_players_per_client_proxy: 4,
            max_players_per_client_tor: 4,
            max_players_per_client_hosting: 4,
          },
          kv: {},
          identity: {},
        },
      },
    }
  },
}

// DELETE /cloud/games/{game_id}/namespaces/{namespace_id}/domains/{domain}
export const removeNamespaceDomain: ApiRoute = {
  method: 'DELETE',
  pattern: '/cloud/games/:game_id/namespaces/:namespace_id/domains/:domain',
  handle(context) {
    const namespace = requireNamespace(context)
    if (context.core.state.removeDomain(namespace, context.params.domain ?? '')) {
      context.core.cdn.rebuild(namespace)
    }
    return {}
  },
}
