// The publish operation: promotion and rollback, uploading nothing.

import type { ServiceClient } from '../api/client.ts'
import { ServiceStateError, UsageError } from '../api/errors.ts'
import type { NamespaceSummary, VersionSummary } from '../api/types.ts'
import type { Run } from '../api/run.ts'
import { resolveCdnDomain } from '../deploy/target/cdn-domain.ts'
import { expectedOfVersion, publishAndSee } from '../deploy/live/publish-and-see.ts'
import { namespaceUrl, readVersion } from '../deploy/live/version-config.ts'
import { liveCell } from '../deploy/account.ts'
import type { Verification } from '../deploy/live/verify.ts'
import {
  checkNameId,
  checkUuid,
  readCdnDomain,
  readChoice,
  readRequiredConnection,
  readVerify,
  type Connection,
  type GetInput,
  type VerifySettings,
} from '../inputs/common.ts'
import { readHostAuthorization } from '../inputs/basic-auth.ts'
import { ActionName, Input, PublishOutput } from '../inputs/constants.ts'
import { keyValueTable, type Cell } from '../common/report.ts'
import type { Journal, Operation } from './operation.ts'
import { inputAssignment, inputName } from '../common/input-naming.ts'
import {
  buildOnTarget,
  describeBuild,
  expectedOfBuild,
  PROMOTE_CHOICES,
  readPromotedBuild,
  revertedConfig,
  type PromotedBuild,
  type PromoteInputs,
  type PromoteWhat,
} from './promote.ts'

export interface PublishInputs extends Connection {
  namespace: { nameId: string } | { id: string }
  source: { versionId: string } | { previous: true } | { fromNamespace: string }
  cdnDomain: string | undefined
  verify: VerifySettings
  /** Used with fromNamespace alone. */
  promote: Omit<PromoteInputs, 'gameId'>
}

export interface PublishResult {
  namespace: NamespaceSummary
  versionId: string
  versionName: string
  replacedVersionId: string
  /** False when the namespace already served that version. */
  changed: boolean
  url: string | undefined
  /** Undefined when not checked. */
  verification: Verification | undefined
  /** With from-namespace. */
  promoted?: { build: PromotedBuild; what: PromoteWhat; reverted: string[] }
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
    const promote = readPromote(get)
    if (!fromNamespace && (promote.expectDigest || promote.expectCommit || promote.authorization))
      throw new UsageError(
        `${inputName(Input.ExpectDigest)}, ${inputName(Input.ExpectCommit)} and ${inputName(Input.FromBasicAuth)} are for a promotion: they need ${inputName(Input.FromNamespace)}`,
      )
    return {
      ...connection,
      namespace,
      source,
      cdnDomain: readCdnDomain(get),
      verify: readVerify(get),
      promote,
    }
  },

  stoppedNote:
    "Publishing changes only the namespace's version, in its last call: a re-run publishes the same version again (a promotion makes its version of the target's config anew; one made before the stop stays unpublished).",

  async run(inputs, run, journal) {
    const { logger, client } = run
    const { game } = await client.getGame(inputs.gameId)
    journal.push(`read game ${game.name_id}`)
    const cdnDomain = await resolveCdnDomain(client, inputs.cdnDomain, inputs.apiUrl, logger)
    const urlOf = (ns: NamespaceSummary) => cdnDomain && namespaceUrl(cdnDomain, game.name_id, ns.name_id)
    const target =
      'id' in inputs.namespace
        ? findNamespace(game.namespaces, inputs.gameId, Input.NamespaceId, inputs.namespace.id)
        : findNamespace(game.namespaces, inputs.gameId, Input.Namespace, inputs.namespace.nameId)
    const url = urlOf(target)
    const promotion =
      'fromNamespace' in inputs.source
        ? await promote(run, inputs, { game, target, from: inputs.source.fromNamespace, urlOf }, journal)
        : undefined
    const versionId = promotion?.versionId ?? (await chooseVersion(client, inputs, game.namespaces, target))
    // Read before publishing: an unknown id fails here with a clear message, and the name is shown.
    const version = await readVersion(client, inputs.gameId, versionId)
    journal.push(`read version '${version.display_name}' (${versionId})`)
    const changed = target.version_id !== versionId
    if (!changed)
      logger.info(
        `Namespace ${target.name_id} already serves version '${version.display_name}' (${versionId})`,
      )
    const expected =
      !url || !inputs.verify.enabled
        ? { unknown: 'no URL' }
        : promotion
          ? expectedOfBuild(promotion.build)
          : await expectedOfVersion(run, {
              url,
              servedAt: (changed
                ? game.namespaces.filter((ns) => ns.version_id === versionId && ns !== target)
                : [target]
              ).map((ns) => urlOf(ns) as string),
              sameSite: async () =>
                (await readVersion(client, inputs.gameId, target.version_id)).config.cdn?.site_id ===
                version.config.cdn?.site_id,
            })
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
    return { ...published, namespace: target, changed, verification, promoted: promotion }
  },

  outputs(result) {
    const record = result.promoted?.build.served?.record
    return {
      [PublishOutput.Digest]: record?.digest ?? null,
      [PublishOutput.Commit]: record?.commit ?? null,
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
    if (result.promoted) rows.splice(1, 0, ...promotedRows(result.promoted, result.namespace.name_id))
    if (result.url) rows.push(['Live', liveCell({ verification: result.verification, published: result })])
    return {
      title: `gamehost publish: ${result.namespace.name_id} ${result.changed ? 'now serves' : 'already served'} ${result.versionName}`,
      blocks: [keyValueTable(rows)],
    }
  },
}

function promotedRows(
  promoted: NonNullable<PublishResult['promoted']>,
  target: string,
): Array<[string, Cell]> {
  const { build, what, reverted } = promoted
  const config =
    what === 'build'
      ? `${target}'s own; the site and routes of ${build.from.name_id}'s version '${build.version.display_name}'`
      : reverted.length
        ? `${build.from.name_id}'s whole version: ${target}'s ${reverted.join(', ')} replaced`
        : `${build.from.name_id}'s whole version (the same ${target} config beyond the site)`
  return [
    ['Promoted', `${describeBuild(build)} from ${build.from.name_id}, site ${build.siteId}`],
    ['Uploaded', '0 bytes: the site is the one served there'],
    ['Config', config],
  ]
}

function findNamespace(
  namespaces: readonly NamespaceSummary[],
  gameId: string,
  input: string,
  value: string,
): NamespaceSummary {
  const found = namespaces.find(
    (ns) => (input === Input.NamespaceId ? ns.namespace_id : ns.name_id) === value,
  )
  if (found) return found
  const has = namespaces.length
    ? namespaces.map((ns) => `${ns.name_id} (${ns.namespace_id})`).join(', ')
    : 'no namespace'
  throw new ServiceStateError(
    `${inputName(input)} '${value}' is not a namespace of game ${gameId}: it has ${has}`,
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
  const { versions } = await client.getNamespaceVersionHistory(inputs.gameId, target.namespace_id)
  const previous = versions.find((entry) => entry.version_id !== target.version_id)
  if (!previous)
    throw new ServiceStateError(
      `${inputName(Input.VersionId)} 'previous': namespace ${target.name_id} has had no other version published ` +
        `(it serves ${target.version_id}); give a ${inputName(Input.VersionId)}`,
    )
  return previous.version_id
}

function readPromote(get: GetInput): PublishInputs['promote'] {
  const digest = get(Input.ExpectDigest).trim()
  if (digest && !/^sha256:[0-9a-f]{64}$/.test(digest))
    throw new UsageError(
      `${inputName(Input.ExpectDigest)} must be sha256: and 64 lowercase hex digits, as the deploy's digest output is`,
    )
  const commit = get(Input.ExpectCommit).trim()
  if (commit && !/^[0-9a-fA-F]{7,40}$/.test(commit))
    throw new UsageError(
      `${inputName(Input.ExpectCommit)} must be a commit's SHA, whole or its first 7 or more hex digits`,
    )
  return {
    what: readChoice(get, Input.Promote, PROMOTE_CHOICES),
    expectDigest: digest || undefined,
    expectCommit: commit || undefined,
    authorization: readHostAuthorization(get(Input.FromBasicAuth).trim(), Input.FromBasicAuth),
  }
}

interface PromotionPlace {
  game: { versions: readonly VersionSummary[]; namespaces: readonly NamespaceSummary[] }
  target: NamespaceSummary
  from: string
  urlOf: (ns: NamespaceSummary) => string | undefined
}

/** Reads and proves the source's build, then makes the version that carries it (promote: build). */
async function promote(run: Run, inputs: PublishInputs, place: PromotionPlace, journal: Journal) {
  const { client, logger } = run
  const { game, target } = place
  const from = findNamespace(game.namespaces, inputs.gameId, Input.FromNamespace, place.from)
  const { what } = inputs.promote
  const build = await readPromotedBuild(
    run,
    { ...inputs.promote, gameId: inputs.gameId },
    from,
    place.urlOf(from),
  )
  journal.push(`read what ${from.name_id} serves: ${describeBuild(build)}`)
  logger.info(
    `Promoting ${describeBuild(build)} from ${from.name_id} (version '${build.version.display_name}', site ${build.siteId}) to ${target.name_id}: 0 bytes to upload`,
  )
  if (what === 'version') {
    const current = await readVersion(client, inputs.gameId, target.version_id)
    const reverted = revertedConfig(current.config, build.version.config)
    if (reverted.length)
      logger.warning(
        `${inputAssignment(Input.Promote, 'version')} publishes ${from.name_id}'s whole version: it replaces ${target.name_id}'s ` +
          `${reverted.join(', ')} (as in its current version '${current.display_name}') with ${from.name_id}'s. ` +
          `${inputAssignment(Input.Promote, 'build')} keeps them.`,
        { title: 'Config reverted' },
      )
    return { versionId: from.version_id, build, what, reverted }
  }
  const made = await buildOnTarget(client, inputs.gameId, target, build, game.versions, logger)
  if (made.created) journal.push(`created version '${made.displayName}' (${made.versionId})`)
  return { versionId: made.versionId, build, what, reverted: [] }
}
