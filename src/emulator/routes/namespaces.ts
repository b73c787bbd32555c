// Namespace routes: create a namespace, add a domain to one.

import {
  createNamespaceProblems,
  DOMAINS_PER_NAMESPACE_MAX,
  isValidDomain,
  nameIdProblems,
} from '../../api/rules.ts'
import { stringField } from '../body.ts'
import { requireGame, type ApiRoute } from '../core.ts'
import { ApiError, internalError, validationError } from '../errors.ts'

// POST /cloud/games/{game_id}/namespaces
export const createGameNamespace: ApiRoute = {
  method: 'POST',
  pattern: '/cloud/games/:game_id/namespaces',
  handle(context) {
    const displayName = stringField(context.body, 'display_name')
    const nameId = stringField(context.body, 'name_id')
    const versionId = stringField(context.body, 'version_id')
    const game = requireGame(context)
    const problems = createNamespaceProblems(displayName, nameId)
    const taken = game.namespaces.some((namespace) => namespace.nameId === nameId)
    if (nameIdProblems(nameId).length === 0 && taken) problems.push(['name-id', 'not-unique'])
    if (problems.length > 0) throw validationError(problems)
    if (!game.versions.has(versionId)) throw internalError()
    return { namespace_id: context.core.state.createNamespace(game, displayName, nameId, versionId) }
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
    const { state } = context.core
    const namespace = state.namespace(requireGame(context), context.params.namespace_id ?? '')
    if (!namespace) throw internalError()
    if (namespace.domains.length >= DOMAINS_PER_NAMESPACE_MAX) {
      throw new ApiError(
        'CDN_TOO_MANY_DOMAINS',
        `A namespace can have at most ${DOMAINS_PER_NAMESPACE_MAX} domains.`,
      )
    }
    if (state.isDomainTaken(domain)) {
      throw new ApiError('CLOUD_HOSTNAME_TAKEN', `The domain "${domain}" is already in use.`)
    }
    state.addDomain(namespace, domain)
    return {}
  },
}
