// A namespace's CDN basic auth: its users (each password a bcrypt hash) and whether its hosts ask
// for them. Each change rebuilds the namespace's CDN config, as a publish does (cdn-config.ts).

import { stringField } from '../body.ts'
import type { ApiRoute } from '../core.ts'
import { ApiError, badBody } from '../errors.ts'
import { requireNamespace } from './namespaces.ts'

/** The users a namespace may have; the insert is refused at the cap, even one that replaces a user. */
export const AUTH_USERS_MAX = 32
/** What the service takes as a bcrypt hash. */
export const BCRYPT_HASH = /^\$2[ayb]?\$[0-9]{2}\$[A-Za-z0-9./]+$/

// POST /cloud/games/{game_id}/namespaces/{namespace_id}/auth-user: adds a user or replaces its password.
export const updateNamespaceCdnAuthUser: ApiRoute = {
  method: 'POST',
  pattern: '/cloud/games/:game_id/namespaces/:namespace_id/auth-user',
  handle(context) {
    const user = stringField(context.body, 'user')
    const password = stringField(context.body, 'password')
    const namespace = requireNamespace(context)
    if (!BCRYPT_HASH.test(password))
      throw new ApiError('CDN_INVALID_AUTH_USER_PASSWORD', 'The password must be a bcrypt hash.')
    if (namespace.authUsers.size >= AUTH_USERS_MAX) {
      throw new ApiError(
        'CDN_TOO_MANY_AUTH_USERS',
        `A namespace can have at most ${AUTH_USERS_MAX} CDN auth users.`,
      )
    }
    namespace.authUsers.set(user, password)
    context.core.cdn.rebuild(namespace)
    return {}
  },
}

// DELETE /cloud/games/{game_id}/namespaces/{namespace_id}/auth-user/{user}
export const removeNamespaceCdnAuthUser: ApiRoute = {
  method: 'DELETE',
  pattern: '/cloud/games/:game_id/namespaces/:namespace_id/auth-user/:user',
  handle(context) {
    const namespace = requireNamespace(context)
    if (namespace.authUsers.delete(context.params.user ?? '')) context.core.cdn.rebuild(namespace)
    return {}
  },
}

// PUT /cloud/games/{game_id}/namespaces/{namespace_id}/cdn-auth: `basic` or `none`.
export const setNamespaceCdnAuthType: ApiRoute = {
  method: 'PUT',
  pattern: '/cloud/games/:game_id/namespaces/:namespace_id/cdn-auth',
  handle(context) {
    const authType = stringField(context.body, 'auth_type')
    if (authType !== 'basic' && authType !== 'none') throw badBody('"auth_type" must be "basic" or "none"')
    const namespace = requireNamespace(context)
    namespace.authType = authType
    context.core.cdn.rebuild(namespace)
    return {}
  },
}
