// The publish operation: promotion and rollback. Sets which version a namespace serves, without
// uploading anything: a version id, `previous` (the one published before the current), or whatever
// another namespace serves.

import type { ServiceClient } from '../api/client.ts'
import { ServiceStateError, UsageError } from '../api/errors.ts'
import type { NamespaceSummary } from '../api/types.ts'
import { resolveCdnDomain } from '../deploy/target/cdn-domain.ts'
import { expectedOfVersion, publishAndSee } from '../deploy/live/publish-and-see.ts'
import { namespaceUrl, readVersion } from '../deploy/live/version-config.ts'
import { liveCell } from '../deploy/account.ts'
import type { Verification } from '../deploy/live/verify.ts'
import {
  checkNameId,
  checkUuid,
  readCdnDomain,
  readRequiredConnection,
  readVerify,
  type Connection,
  type VerifySettings,
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
  verify: VerifySettings
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
  /** What the namespace's host was seen serving; undefined when not checked. */
  verification: Verification | undefined
}

export const publishOperation: Operation<PublishInputs, PublishResult> = {
  name: ActionName.Publish,

  read(get, options) {
    const connection = readRequiredConnection(get, options)
    const oneOf = (a: string, b: string, why: string) => {
      const [x, y] = [get(a).trim(), get(b).trim()]
      if (x && y)
        throw new UsageError(`${inputName(a)} and ${inputName(b)} are both given: give one of the two`)
      if (!x && !y) throw new UsageError(`${inputName(a)} or ${inputName(b)} is required: ${why}`)
      return [x, y] as const
    }
    const [nameId, namespaceId] = oneOf(Input.Namespace, Input.NamespaceId, 'the namespace to publish to')
    const namespace = nameId
      ? { nameId: checkNameId(Input.Namespace, nameId) }
      : { id: checkUuid(Input.NamespaceId, namespaceId) }
    const [versionId, fromNamespace] = oneOf(
      Input.VersionId,
      Input.FromNamespace,
      "a version id ('previous' rolls back to the version published before the current one), or the namespace whose version to promote",
    )
    const source: PublishInputs['source'] = fromNamespace
      ? { fromNamespace: checkNameId(Input.FromNamespace, fromNamespace) }
      : versionId === 'previous'
        ? { previous: true }
        : { versionId: checkUuid(Input.VersionId, versionId) }
    return { ...connection, namespace, source, cdnDomain: readCdnDomain(get), verify: readVerify(get) }
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
    if (!changed)
      logger.info(
        `Namespace ${target.name_id} already serves version '${version.display_name}' (${versionId})`,
      )
    const url = cdnDomain && namespaceUrl(cdnDomain, game.name_id, target.name_id)
    const servedAt = changed
      ? game.namespaces.filter((ns) => ns.version_id === versionId && ns !== target)
      : [target]
    const expected =
      url && inputs.verify.enabled
        ? await expectedOfVersion(run, {
            url,
            servedAt: servedAt.map((ns) => namespaceUrl(cdnDomain, game.name_id, ns.name_id)),
            sameSite: async () =>
              (await readVersion(client, inputs.gameId, target.version_id)).config.cdn?.site_id ===
              version.config.cdn?.site_id,
          })
        : { unknown: 'no URL' }
    if (changed)
      journal.push(
        `namespace ${target.name_id} was being switched to it (the call may or may not have been made)`,
      )
    const published = {
      versionId,
      versionName: version.display_name,
      replacedVersionId: target.version_id,
      created: changed,
      url,
      domain: undefined,
    }
    const verification = await publishAndSee(
      {
        gameId: inputs.gameId,
        namespaceId: target.namespace_id,
        nameId: target.name_id,
        published,
        alreadyServed: !changed,
      },
      {
        settings: inputs.verify,
        expected,
        run,
        logger,
        onPublished: () => (journal[journal.length - 1] = `published it to namespace ${target.name_id}`),
        onSeen: (seen) => {
          if (seen.cancelled) journal.push(liveCell({ verification: seen, published }))
        },
      },
    )
    return {
      namespace: target,
      versionId,
      versionName: version.display_name,
      replacedVersionId: target.version_id,
      changed,
      url,
      verification,
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
    if (result.url) rows.push(['Live', liveCell({ verification: result.verification, published: result })])
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
    if (!from)
      throw new ServiceStateError(
        `${inputName(Input.FromNamespace)} '${source.fromNamespace}' is not a namespace of game ${inputs.gameId}: it has ${describeNamespaces(namespaces)}`,
      )
    const version = await readVersion(client, inputs.gameId, from.version_id)
    if (!version.config.cdn?.site_id)
      throw new ServiceStateError(
        `${inputName(Input.FromNamespace)} '${from.name_id}' serves version '${version.display_name}' (${version.version_id}), ` +
          `which has no CDN site: it serves no build, and nothing was published. Deploy a build to ${from.name_id} first ` +
          `(gamehost deploy --namespace ${from.name_id}), or give a ${inputName(Input.VersionId)}`,
      )
    return from.version_id
  }
  const { versions } = await client.getNamespaceVersionHistory(inputs.gameId, target.namespace_id)
  const previous = versions.find((entry) => entry.version_id !== target.version_id)
  if (!previous)
    throw new ServiceStateError(
      `${inputName(Input.VersionId)} 'previous': namespace ${target.name_id} has had no other version published ` +
        `(it serves ${target.version_id}); give a ${inputName(Input.VersionId)}`,
    )
  return previous.version_id
}

function describeNamespaces(namespaces: readonly NamespaceSummary[]): string {
  if (namespaces.length === 0) return 'no namespace'
  return namespaces.map((ns) => `${ns.name_id} (${ns.namespace_id})`).join(', ')
}
