// The service's operations: each one's name, whether a retry is safe, and the answer it promises;
// and the classifier that says which failures of a call a retry can fix.
import { requestedDelay, ServiceError } from './errors.ts'
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
import { siteAnswer, siteAnswerStream, type AnswerStream } from './site-answer.ts'

/**
 * How a failed call may be retried. `read`: reads and validations, retried on any transient failure.
 * `create`: calls that create something, retried only where a retry cannot create a duplicate or
 * hide an error (429, 502-504, a connection that failed before the request was sent).
 */
type Safety = 'read' | 'create'

export interface Operation {
  name: string
  safety: Safety
  /** The shape its 200 answer promises; an answer that does not fit fails naming the field. */
  answer?: ShapeCheck
  /** Reads a 200 answer as it arrives instead of as one text (the site's, some MB). */
  stream?: () => AnswerStream
}

const validated = objectOf({ errors: listOf(objectOf({ path: listOf(aString) })) })

export const OPS = {
  listServers: {
    name: 'servers.list',
    safety: 'read',
    answer: objectOf({
      servers: listOf(objectOf({ id: anId, created_at: aNumber, tags: anObject })),
    }),
  },
  getNamespaceLobby: {
    name: 'games.namespaces.logs.getNamespaceLobby',
    safety: 'read',
    answer: objectOf({ lobby: objectOf({ lobby_id: anId, status: anObject }) }),
  },
  validateMatchmakerConfig: {
    name: 'games.namespaces.validateGameNamespaceMatchmakerConfig',
    safety: 'read',
    answer: validated,
  },
  listCustomAvatars: {
    name: 'games.avatars.listGameCustomAvatars',
    safety: 'read',
    answer: objectOf({
      custom_avatars: listOf(
        objectOf({ upload_id: anId, display_name: aString, content_length: aNumber, complete: aBoolean }),
      ),
    }),
  },
  createNamespace: {
    name: 'games.namespaces.createGameNamespace',
    safety: 'create',
    answer: objectOf({ namespace_id: anId }),
  },
  validateGroup: {
    name: 'groups.validate',
    safety: 'read',
    answer: validated,
  },
  addNamespaceDomain: {
    name: 'games.namespaces.addNamespaceDomain',
    safety: 'create',
  },
  createCdnSite: {
    name: 'games.cdn.createGameCdnSite',
    safety: 'create',
    answer: siteAnswer,
    stream: siteAnswerStream,
  },
  getGame: {
    name: 'games.getGameById',
    safety: 'read',
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
    answer: anObject,
  },
  // Adding a user replaces one of the same name: safe to repeat.
  updateNamespaceCdnAuthUser: {
    name: 'cloud.games.namespaces.updateNamespaceCdnAuthUser',
    safety: 'read',
    answer: anObject,
  },
  setNamespaceCdnAuthType: {
    name: 'cloud.games.namespaces.setNamespaceCdnAuthType',
    safety: 'read',
    answer: anObject,
  },
  // Removing a user twice removes nothing the second time.
  removeNamespaceCdnAuthUser: {
    name: 'cloud.games.namespaces.removeNamespaceCdnAuthUser',
    safety: 'read',
    answer: anObject,
  },
  getVersion: {
    name: 'games.versions.getGameVersionById',
    safety: 'read',
    answer: objectOf({
      version: objectOf({ version_id: anId, display_name: aString, create_ts: aString, config: anObject }),
    }),
  },
  validateVersion: {
    name: 'games.versions.validateGameVersion',
    safety: 'read',
    answer: validated,
  },
  reserveVersionName: {
    name: 'games.versions.reserveVersionName',
    safety: 'read',
    answer: objectOf({ version_display_name: aString }),
  },
  createVersion: {
    name: 'games.versions.createGameVersion',
    safety: 'create',
    answer: objectOf({ version_id: anId }),
  },
  // Publishing the version a namespace already has changes nothing: safe to repeat.
  setNamespaceVersion: {
    name: 'games.namespaces.updateGameNamespaceVersion',
    safety: 'read',
    answer: anObject,
  },
  getNamespaceVersionHistory: {
    name: 'games.namespaces.getGameNamespaceVersionHistoryList',
    safety: 'read',
    answer: objectOf({ versions: listOf(objectOf({ version_id: anId, deploy_ts: aString })) }),
  },
  // What the service says of itself: the domain namespaces are served under (`domains.cdn`).
  bootstrap: {
    name: 'cloud.bootstrap',
    safety: 'read',
    answer: objectOf({ domains: optional(objectOf({ cdn: optional(aHostName) })) }),
  },
  // Completing twice is harmless: the service assembles the same parts again.
  completeUpload: {
    name: 'uploads.complete',
    safety: 'read',
  },
} as const satisfies Record<string, Operation>

/** The API's classifier: what a retry can fix, after the wait the service asks for (retry-after). */
export function classify(op: Operation, error: unknown, now: number): RetryVerdict {
  if (!shouldRetry(op, error)) return false
  const afterMs = requestedDelay(error, now)
  return afterMs === undefined ? true : { afterMs }
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

/** The name of each operation of the service, as its errors say it. */
export type OperationName = (typeof OPS)[keyof typeof OPS]['name']
