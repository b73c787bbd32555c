// The service's operations: each one's name, whether a retry is safe, and the answer it promises;
// and the classifier that says which failures of a call a retry can fix.
import { retryVerdict, ServiceError } from './errors.ts'
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
import { isConnectFailure, isNetworkFailure } from '../common/network.ts'
import type { RetryVerdict } from '../common/retry.ts'

/**
 * `read`: safe to repeat, retried on any transient failure. `create`: retried only where a retry
 * cannot create a duplicate (429, 502-504, a connection that failed before the request was sent).
 */
type Safety = 'read' | 'create'
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'

export interface Operation {
  name: string
  method: Method
  safety: Safety
  /** The shape its 200 answer promises. */
  answer?: ShapeCheck
}

function op<N extends string, A extends ShapeCheck | undefined = undefined>(
  method: Method,
  name: N,
  answer?: A,
): { name: N; method: Method; safety: Safety; answer: A } {
  return { name, method, safety: 'read', answer: answer as A }
}

function creates<O extends Operation>(operation: O): O {
  return { ...operation, safety: 'create' }
}

const validated = objectOf({ errors: listOf(objectOf({ path: listOf(aString) })) })

export const OPS = {
  listServers: op(
    'GET',
    'servers.list',
    objectOf({ servers: listOf(objectOf({ id: anId, created_at: aNumber, tags: anObject })) }),
  ),
  getNamespaceLobby: op(
    'GET',
    'games.namespaces.logs.getNamespaceLobby',
    objectOf({ lobby: objectOf({ lobby_id: anId, status: anObject }) }),
  ),
  validateMatchmakerConfig: op('POST', 'games.namespaces.validateGameNamespaceMatchmakerConfig', validated),
  listCustomAvatars: op(
    'GET',
    'games.avatars.listGameCustomAvatars',
    objectOf({
      custom_avatars: listOf(
        objectOf({ upload_id: anId, display_name: aString, content_length: aNumber, complete: aBoolean }),
      ),
    }),
  ),
  createNamespace: creates(
    op('POST', 'games.namespaces.createGameNamespace', objectOf({ namespace_id: anId })),
  ),
  validateGroup: op('POST', 'groups.validate', validated),
  addNamespaceDomain: creates(op('POST', 'games.namespaces.addNamespaceDomain')),
  createCdnSite: creates(
    op(
      'POST',
      'games.cdn.createGameCdnSite',
      objectOf({
        site_id: anId,
        upload_id: anId,
        presigned_requests: listOf(
          objectOf({ path: aString, url: aString, byte_offset: aNumber, content_length: aNumber }),
        ),
      }),
    ),
  ),
  getGame: op(
    'GET',
    'games.getGameById',
    objectOf({
      // The name ids make the host name of the url output: only a name id's characters.
      game: objectOf({
        name_id: aNameId,
        namespaces: listOf(objectOf({ namespace_id: anId, name_id: aNameId })),
        versions: listOf(objectOf({ version_id: anId, display_name: aString, create_ts: aString })),
      }),
    }),
  ),
  getNamespace: op(
    'GET',
    'games.namespaces.getGameNamespaceById',
    objectOf({
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
  ),
  // Removing a domain or a user twice removes nothing the second time; adding a user replaces one of
  // the same name; publishing the version a namespace already has changes nothing: all safe to repeat.
  removeNamespaceDomain: op('DELETE', 'games.namespaces.removeNamespaceDomain', anObject),
  updateNamespaceCdnAuthUser: op('POST', 'cloud.games.namespaces.updateNamespaceCdnAuthUser', anObject),
  setNamespaceCdnAuthType: op('PUT', 'cloud.games.namespaces.setNamespaceCdnAuthType', anObject),
  removeNamespaceCdnAuthUser: op('DELETE', 'cloud.games.namespaces.removeNamespaceCdnAuthUser', anObject),
  getVersion: op(
    'GET',
    'games.versions.getGameVersionById',
    objectOf({
      version: objectOf({ version_id: anId, display_name: aString, create_ts: aString, config: anObject }),
    }),
  ),
  validateVersion: op('POST', 'games.versions.validateGameVersion', validated),
  reserveVersionName: op(
    'POST',
    'games.versions.reserveVersionName',
    objectOf({ version_display_name: aString }),
  ),
  createVersion: creates(op('POST', 'games.versions.createGameVersion', objectOf({ version_id: anId }))),
  setNamespaceVersion: op('PUT', 'games.namespaces.updateGameNamespaceVersion', anObject),
  getNamespaceVersionHistory: op(
    'GET',
    'games.namespaces.getGameNamespaceVersionHistoryList',
    objectOf({ versions: listOf(objectOf({ version_id: anId, deploy_ts: aString })) }),
  ),
  bootstrap: op(
    'GET',
    'cloud.bootstrap',
    objectOf({ domains: optional(objectOf({ cdn: optional(aHostName) })) }),
  ),
  // Completing twice is harmless: the service assembles the same parts again.
  completeUpload: op('POST', 'uploads.complete'),
} as const satisfies Record<string, Operation>

/** What a retry can fix, after the wait the service asks for. */
export function classify(op: Operation, error: unknown, now: number): RetryVerdict {
  return retryVerdict(shouldRetry(op, error), error, now)
}

export function shouldRetry(op: Operation, error: unknown): boolean {
  if (error instanceof ServiceError) {
    if ([429, 502, 503, 504].includes(error.status)) return true
    if (op.safety === 'create') return false
    // 500 ERROR is how the service answers an unknown id: retrying cannot help.
    return error.status === 408 || (error.status >= 500 && error.code !== 'ERROR')
  }
  return op.safety === 'create' ? isConnectFailure(error) : isNetworkFailure(error)
}

export type OperationName = (typeof OPS)[keyof typeof OPS]['name']
