// The publish operation: promotion and rollback. Sets which version a namespace serves, without
// uploading anything: a version id, `previous` (the one published before the current), or whatever
// another namespace serves.

import type { ServiceClient } from '../api/client.ts'
import { ServiceStateError, UsageError } from '../api/errors.ts'
import type { NamespaceSummary } from '../api/types.ts'
import { resolveCdnDomain } from '../deploy/cdn-domain.ts'
import { namespaceUrl, readVersion } from '../deploy/publish.ts'
import {
  checkNameId,
  checkUuid,
  readCdnDomain,
  readRequiredConnection,
  type Connection,
} from '../inputs/common.ts'
import { ActionName, Input, PublishOutput } from '../inputs/constants.ts'
import { keyValueTable, type Cell } from '../common/report.ts'
import type { Operation } from './operation.ts'
import { inputName } from '../common/input-naming.ts'

export interface PublishInputs extends Connection {
  /** The namespace to publish to, by name_id or by id (one of the two). */
  namespace: { nameId: string } | { id: string }
  /** What to publish: a version id, the previously published version, or another namespace's version. */
  source: { versionId: string } | { previous: true } | { fromNamespace: string }
  /** Undefined: the service's own (resolveCdnDomain). */
  cdnDomain: string | undefined
}

export interface PublishResult {
  namespace: NamespaceSummary
  versionId: string
  versionName: string
  /** The version the namespace served before. */
  replacedVersionId: string
  /** False when the namespace already served that version: nothing was changed. */
  changed: boolean
  /** Undefined when the service names no CDN domain and cdn-domain is empty. */
  url: string | undefined
}

export const publishOperation: Operation<PublishInputs, PublishResult> = {
  name: ActionName.Publish,

  read(get, options) {
    const connection = readRequiredConnection(get, options)
    const text = (name: string) => get(name).trim()
    const nameId = text(Input.Namespace)
    const namespaceId = text(Input.NamespaceId)
    if (!nameId && !namespaceId)
      throw new UsageError(
        `${inputName(Input.Namespace)} or ${inputName(Input.NamespaceId)} is required: the namespace to publish to`,
      )
    if (nameId && namespaceId)
      throw new UsageError(
        `${inputName(Input.Namespace)} and ${inputName(Input.NamespaceId)} are both given: give one of the two`,
      )
    const namespace = nameId
      ? { nameId: checkNameId(Input.Namespace, nameId) }
      : { id: checkUuid(Input.NamespaceId, namespaceId) }
    const versionId = text(Input.VersionId)
    const fromNamespace = text(Input.FromNamespace)
    if (!versionId && !fromNamespace) {
      throw new UsageError(
        `${inputName(Input.VersionId)} or ${inputName(Input.FromNamespace)} is required: a version id ('previous' rolls back to the ` +
          'version published before the current one), or the namespace whose version to promote',
      )
    }
    if (versionId && fromNamespace)
      throw new UsageError(
        `${inputName(Input.VersionId)} and ${inputName(Input.FromNamespace)} are both given: give one of the two`,
      )
    const source: PublishInputs['source'] = fromNamespace
      ? { fromNamespace: checkNameId(Input.FromNamespace, fromNamespace) }
      : versionId === 'previous'
        ? { previous: true }
        : { versionId: checkUuid(Input.VersionId, versionId) }
    return { ...connection, namespace, source, cdnDomain: readCdnDomain(get) }
  },

  stoppedNote:
    "Publishing changes only the namespace's version, in its last call: a re-run publishes the same version again.",

  async run(inputs, run, journal) {
    const { logger, client } = run
    const { game } = await client.getGame(inputs.gameId)
    journal.push(`read game ${game.name_id}`)
    const cdnDomain = await resolveCdnDomain(client, inputs.cdnDomain, inputs.apiUrl, logger)
    const target = findNamespace(game.namespaces, inputs.namespace, inputs.gameId)
    const versionId = await chooseVersion(client, inputs, game.namespaces, target)
    // Read before publishing: an unknown id fails here with a clear message, and the name is shown.
    const version = await readVersion(client, inputs.gameId, versionId)
    journal.push(`read version '${version.display_name}' (${versionId})`)
    const changed = target.version_id !== versionId
    if (changed) {
      journal.push(
        `namespace ${target.name_id} was being switched to it (the call may or may not have been made)`,
      )
      await client.setNamespaceVersion(inputs.gameId, target.namespace_id, versionId)
      journal[journal.length - 1] = `published it to namespace ${target.name_id}`
      logger.info(
        `Published version '${version.display_name}' (${versionId}) to namespace ${target.name_id}; it served ${target.version_id}`,
      )
    } else {
      logger.info(
        `Namespace ${target.name_id} already serves version '${version.display_name}' (${versionId})`,
      )
    }
    const url = cdnDomain && namespaceUrl(cdnDomain, game.name_id, target.name_id)
    if (url) logger.info(`Live at ${url}`)
    return {
      namespace: target,
      versionId,
      versionName: version.display_name,
      replacedVersionId: target.version_id,
      changed,
      url,
    }
  },

  outputs(result) {
    return {
      [PublishOutput.NamespaceId]: result.namespace.namespace_id,
      [PublishOutput.VersionId]: result.versionId,
      [PublishOutput.Url]: result.url ?? null,
      [PublishOutput.ReplacedVersionId]: result.replacedVersionId,
    }
  },

  report(result) {
    const rows: Array<[string, Cell]> = [
      ['Namespace', `${result.namespace.name_id} (${result.namespace.namespace_id})`],
      ['Version', `${result.versionName} (${result.versionId})`],
      [
        'Replaced',
        result.changed ? { code: result.replacedVersionId } : 'nothing: it already served this version',
      ],
      ['URL', result.url ?? `unknown: the service names no CDN domain (set ${inputName(Input.CdnDomain)})`],
    ]
    return {
      title: `gamehost publish: ${result.namespace.name_id} ${result.changed ? 'now serves' : 'already served'} ${result.versionName}`,
      blocks: [keyValueTable(rows)],
    }
  },
}

function findNamespace(
  namespaces: readonly NamespaceSummary[],
  wanted: PublishInputs['namespace'],
  gameId: string,
): NamespaceSummary {
  const found = namespaces.find((ns) =>
    'id' in wanted ? ns.namespace_id === wanted.id : ns.name_id === wanted.nameId,
  )
  if (found) return found
  const [input, value] = 'id' in wanted ? [Input.NamespaceId, wanted.id] : [Input.Namespace, wanted.nameId]
  throw new ServiceStateError(
    `${inputName(input)} '${value}' is not a namespace of game ${gameId}: it has ${describeNamespaces(namespaces)}`,
  )
}

async function chooseVersion(
  client: ServiceClient,
  inputs: PublishInputs,
  namespaces: readonly NamespaceSummary[],
  target: NamespaceSummary,
): Promise<string> {
  const { source } = inputs
  if ('versionId' in source) return source.versionId
  if ('fromNamespace' in source) {
    const from = namespaces.find((ns) => ns.name_id === source.fromNamespace)
    if (!from) {
      throw new ServiceStateError(
        `${inputName(Input.FromNamespace)} '${source.fromNamespace}' is not a namespace of game ${inputs.gameId}: it has ${describeNamespaces(namespaces)}`,
      )
    }
    return from.version_id
  }
  const { versions } = await client.getNamespaceVersionHistory(inputs.gameId, target.namespace_id)
  const previous = versions.find((entry) => entry.version_id !== target.version_id)
  if (!previous) {
    throw new ServiceStateError(
      `${inputName(Input.VersionId)} 'previous': namespace ${target.name_id} has had no other version published ` +
        `(it serves ${target.version_id}); give a ${inputName(Input.VersionId)}`,
    )
  }
  return previous.version_id
}

function describeNamespaces(namespaces: readonly NamespaceSummary[]): string {
  if (namespaces.length === 0) return 'no namespace'
  return namespaces.map((ns) => `${ns.name_id} (${ns.namespace_id})`).join(', ')
}
