// A namespace's live version: publish one, and the history of what was published.

import { I32_MAX } from '../../api/rules.ts'
import { stringField } from '../body.ts'
import { requireGame, type ApiRoute } from '../core.ts'
import { ApiError, badBody, internalError } from '../errors.ts'
import { isUuid } from '../router.ts'
import { requireNamespace } from './namespaces.ts'

const HISTORY_DEFAULT_LIMIT = 32
const U32_MAX = 0xffff_ffff
const I64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n }

// PUT /cloud/games/{game_id}/namespaces/{namespace_id}/version
export const updateGameNamespaceVersion: ApiRoute = {
  method: 'PUT',
  pattern: '/cloud/games/:game_id/namespaces/:namespace_id/version',
  handle(context) {
    const versionId = stringField(context.body, 'version_id')
    if (!isUuid(versionId)) throw badBody('"version_id" must be a UUID')
    const namespace = requireNamespace(context)
    if (!requireGame(context).versions.has(versionId)) throw internalError()
    const { state, faults, cdn } = context.core
    // Publishing the version already set is a no-op: no history entry, no CDN config rebuild.
    if (state.publishVersion(namespace, versionId) && !faults.decidePublish(context.req)) {
      cdn.rebuild(namespace)
    }
    return {}
  },
}

// GET /cloud/games/{game_id}/namespaces/{namespace_id}/version-history
export const getGameNamespaceVersionHistoryList: ApiRoute = {
  method: 'GET',
  pattern: '/cloud/games/:game_id/namespaces/:namespace_id/version-history',
  handle(context) {
    const limit = parseLimit(context.query.get('limit'))
    const namespace = requireNamespace(context)
    // The service parses the anchor (an i64, else a 500) and then does not use it.
    const anchor = context.query.get('anchor')
    if (anchor !== null && !isI64(anchor)) throw internalError()
    // Its query binds the limit as a signed 32-bit number: more does not run.
    if (limit > I32_MAX) throw internalError()
    return {
      versions: [...namespace.history]
        .reverse()
        .slice(0, limit)
        .map((deploy) => ({
          namespace_id: namespace.id,
          version_id: deploy.versionId,
          deploy_ts: deploy.deployTs,
        })),
    }
  },
}

/** An unsigned 32-bit number, default 32; 0 answers no versions (the service sets no minimum). */
function parseLimit(value: string | null): number {
  if (value === null) return HISTORY_DEFAULT_LIMIT
  const limit = /^\+?\d+$/.test(value) ? Number(value) : NaN
  if (!(limit <= U32_MAX)) {
    throw new ApiError(
      'API_BAD_QUERY',
      `Bad query: "limit" must be an unsigned 32-bit integer, got "${value}".`,
    )
  }
  return limit
}

function isI64(value: string): boolean {
  if (!/^[+-]?\d+$/.test(value)) return false
  const number = BigInt(value)
  return number >= I64.min && number <= I64.max
}
