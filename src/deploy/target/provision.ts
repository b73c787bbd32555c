import type { ServiceClient } from '../../api/client.ts'
import { ServiceError, ServiceStateError, UsageError } from '../../api/errors.ts'
import type { GetGameResponse, NamespaceSummary, ValidationError } from '../../api/types.ts'
import { Input } from '../../inputs/constants.ts'
import { matchmakerError, type NamespaceTarget, type TargetedInputs } from '../../inputs/deploy.ts'
import type { Logger } from '../../common/logger.ts'
import { latestVersion } from '../live/version-config.ts'
import { inputName } from '../../common/input-naming.ts'

export interface Provisioned {
  nameId: string | undefined
  namespaceId: string | undefined
  namespaceCreated: boolean
  domain: string | undefined
  /** It serves only once `active`. */
  domainStatus?: DomainStatus
  matchmakerValidated: boolean
}

/** Pending until its DNS has a CNAME record to the namespace's host name. */
export interface DomainStatus {
  /** `active`, `pending`, `failed`, or `unknown` when the service says nothing. */
  status: string
  /** When the service names it (else the namespace's host). */
  cnameRecord: string | undefined
}

type Game = GetGameResponse['game']
type Prepared = Pick<Provisioned, 'domain' | 'domainStatus' | 'matchmakerValidated'>
type VersionChoice = { id: string; description: string }
type IdTarget = Extract<NamespaceTarget, { kind: 'id' }>

interface Provisioning {
  client: ServiceClient
  inputs: TargetedInputs
  logger: Logger
}

const PROD = 'prod'

/**
 * All that decides where the bytes go is read from the service, so a re-run ends on the same namespace.
 * With `createLater`, a missing namespace is created after the upload (createNamespaceOn).
 */
export async function provision(
  client: ServiceClient,
  inputs: TargetedInputs,
  logger: Logger,
  options: {
    onNamespace?: (namespaceId: string) => void
    createLater?: boolean
    /** A check that may still refuse, before anything is created or attached. */
    beforeChanges?: () => Promise<void>
  } = {},
): Promise<{ provisioned: Provisioned; located: { game: Game; namespace: NamespaceSummary | undefined } }> {
  const job = { client, inputs, logger }
  const { target } = inputs
  const { game } = await client.getGame(inputs.connection.gameId)
  await options.beforeChanges?.()
  let namespace: NamespaceSummary | undefined
  let created: { namespaceId: string; created: boolean } | undefined
  if (target.kind === 'id') {
    namespace = checkNamespaceId(job, game, target)
  } else {
    namespace = game.namespaces.find((ns) => ns.name_id === target.nameId)
    if (namespace) logger.info(`Namespace ${namespace.name_id} exists: using ${namespace.namespace_id}`)
    else if (!options.createLater) created = await createNamespace(job, target, chooseVersion(inputs, game))
  }
  const namespaceId = namespace?.namespace_id ?? created?.namespaceId
  let prepared: Prepared = { domain: undefined, matchmakerValidated: false }
  if (namespaceId) {
    options.onNamespace?.(namespaceId)
    prepared = await prepareNamespace(job, namespaceId, false)
  } else if (target.matchmaker && game.namespaces[0]) {
    // Created after the upload: validated now against another namespace (the rules are the same).
    prepared.matchmakerValidated = await validateMatchmaker(job, game.namespaces[0].namespace_id)
  }
  const provisioned: Provisioned = {
    nameId: namespace?.name_id ?? target.nameId,
    namespaceId,
    namespaceCreated: created?.created ?? false,
    ...prepared,
  }
  return { provisioned, located: { game, namespace } }
}

/**
 * Creates the namespace on `base`, never on the new version (the service may never serve a namespace
 * created directly on a version); the caller publishes the new version to it.
 */
export async function createNamespaceOn(
  client: ServiceClient,
  inputs: TargetedInputs,
  base: VersionChoice,
  provisioned: Provisioned,
  logger: Logger,
  onNamespace?: (namespaceId: string) => void,
): Promise<Provisioned & { namespaceId: string }> {
  const { target } = inputs
  if (target.kind !== 'name') throw new Error(`namespace ${target.namespaceId} is not created: it exists`)
  const job = { client, inputs, logger }
  const { namespaceId, created } = await createNamespace(job, target, base)
  onNamespace?.(namespaceId)
  const prepared = await prepareNamespace(job, namespaceId, provisioned.matchmakerValidated)
  return { ...provisioned, namespaceId, namespaceCreated: created, ...prepared }
}

async function prepareNamespace(
  job: Provisioning,
  namespaceId: string,
  matchmakerValidated: boolean,
): Promise<Prepared> {
  const { domain } = job.inputs.target
  return {
    domain,
    domainStatus: domain ? await attachDomain(job, namespaceId, domain) : undefined,
    matchmakerValidated: matchmakerValidated || (await validateMatchmaker(job, namespaceId)),
  }
}

async function validateMatchmaker(
  { client, inputs, logger }: Provisioning,
  namespaceId: string,
): Promise<boolean> {
  const { matchmaker } = inputs.target
  if (!matchmaker) return false
  const { errors } = await client.validateMatchmakerConfig(inputs.connection.gameId, namespaceId, {
    lobby_count_max: matchmaker.lobbyCountMax,
    max_players: matchmaker.maxPlayers,
  })
  if (errors.length) throw matchmakerError(errors)
  logger.info(
    `Matchmaker config is valid: lobby_count_max ${matchmaker.lobbyCountMax}, max_players ${matchmaker.maxPlayers}`,
  )
  return true
}

function checkNamespaceId({ inputs, logger }: Provisioning, game: Game, target: IdTarget): NamespaceSummary {
  const { namespaceId, nameId } = target
  const found = game.namespaces.find((namespace) => namespace.namespace_id === namespaceId)
  if (!found) {
    const known = game.namespaces.map((namespace) => `${namespace.name_id} (${namespace.namespace_id})`)
    throw new ServiceStateError(
      `${inputName(Input.NamespaceId)} '${namespaceId}' is not a namespace of game ${inputs.connection.gameId}: ` +
        `it has ${known.length ? known.join(', ') : 'no namespace'}`,
    )
  }
  if (nameId && found.name_id !== nameId) {
    throw new ServiceStateError(
      `${inputName(Input.NamespaceId)} '${namespaceId}' is namespace '${found.name_id}', not '${nameId}' as ${inputName(Input.Namespace)} says: ` +
        'give one of the two, or two that agree',
    )
  }
  logger.info(`Using namespace ${found.name_id} (${namespaceId})`)
  return found
}

/** name-id.not-unique: another run created it meanwhile, and it is looked up again. */
async function createNamespace(
  { client, inputs, logger }: Provisioning,
  target: Extract<NamespaceTarget, { kind: 'name' }>,
  version: VersionChoice,
): Promise<{ namespaceId: string; created: boolean }> {
  const { nameId, displayName } = target
  const { gameId } = inputs.connection
  try {
    const created = await client.createNamespace(gameId, {
      name_id: nameId,
      display_name: displayName,
      version_id: version.id,
    })
    logger.info(`Created namespace ${nameId} (${created.namespace_id}) on version ${version.description}`)
    return { namespaceId: created.namespace_id, created: true }
  } catch (error) {
    if (!isNameTaken(error)) throw error
    const { game: again } = await client.getGame(gameId)
    const winner = again.namespaces.find((namespace) => namespace.name_id === nameId)
    if (!winner) throw error
    logger.info(`Namespace ${nameId} was created meanwhile by another run: using ${winner.namespace_id}`)
    return { namespaceId: winner.namespace_id, created: false }
  }
}

/**
 * The version a new namespace starts on: version-id; else what `prod` serves (a preview inherits the
 * released config, not another preview's routes); else the game's latest.
 */
export function chooseVersion(inputs: TargetedInputs, game: Game): VersionChoice {
  const given = inputs.target.versionId
  if (given) return { id: given, description: given }
  const prod = game.namespaces.find((namespace) => namespace.name_id === PROD)
  if (prod) {
    const name = game.versions.find((version) => version.version_id === prod.version_id)?.display_name
    return {
      id: prod.version_id,
      description: `${prod.version_id} (${name ? `'${name}', ` : ''}what ${PROD} serves: no ${inputName(Input.VersionId)} was given)`,
    }
  }
  const latest = latestVersion(game.versions)
  if (!latest) {
    throw new ServiceStateError(
      `${inputName(Input.Namespace)} '${inputs.target.nameId}' does not exist and game ${inputs.connection.gameId} has no version ` +
        `to create it on: publish a version, or pass ${inputName(Input.VersionId)}`,
    )
  }
  return {
    id: latest.version_id,
    description: `${latest.version_id} ('${latest.display_name}', the game's latest: no ${inputName(Input.VersionId)} was given and it has no ${PROD} namespace)`,
  }
}

/** The service answers a domain the namespace has already with 500 ERROR, so the namespace is read first. */
async function attachDomain(job: Provisioning, namespaceId: string, domain: string): Promise<DomainStatus> {
  const { client, inputs, logger } = job
  const had = await findDomain(job, namespaceId, domain)
  if (had) {
    logger.info(`Domain ${domain} is already attached to namespace ${namespaceId} (${had.status})`)
    return had
  }
  try {
    await client.addNamespaceDomain(inputs.connection.gameId, namespaceId, domain)
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error
    const refused = domainRefusal(error, domain, namespaceId)
    if (refused) throw refused
    // A run beside this one may have added it between the read and the add (500 ERROR).
    const meanwhile = error.code === 'ERROR' && (await findDomain(job, namespaceId, domain))
    if (!meanwhile) throw error
    logger.info(`Domain ${domain} was attached to namespace ${namespaceId} meanwhile by another run`)
    return meanwhile
  }
  const status = (await findDomain(job, namespaceId, domain)) ?? { status: 'unknown', cnameRecord: undefined }
  logger.info(`Added domain ${domain} to namespace ${namespaceId} (${status.status})`)
  return status
}

function domainRefusal(error: ServiceError, domain: string, namespaceId: string): UsageError | undefined {
  const given = `${inputName(Input.Domain)} '${domain}'`
  const quoted = `(${error.message})`
  switch (error.code) {
    case 'CLOUD_HOSTNAME_TAKEN':
      return new ServiceStateError(
        `${given} is held by another namespace (or another account), not by namespace ${namespaceId}: ` +
          `remove it there first, or choose another ${inputName(Input.Domain)}. ${quoted}`,
        { cause: error },
      )
    case 'CLOUD_TOO_MANY_PENDING_HOSTNAMES_FOR_GROUP':
      return new ServiceStateError(
        `${given} cannot be added: the team already holds the most custom domains the service lets wait ` +
          "for their DNS (10 pending). A domain stays pending until its DNS has a CNAME record to its namespace's host name. " +
          'Create the CNAME records of the pending ones, or free the domains of previews done with (retiring a preview frees ' +
          `its ${inputName(Input.Domain)}: its pull request's close, the sweep, or ${inputName(Input.MaxPreviews)} of 10 or fewer (fewer when other ` +
          `domains wait too), which retires the least recently deployed preview before a new one adds its domain); for a preview per pull request, leave ${inputName(Input.Domain)} empty: each namespace is served at its own host. ${quoted}`,
        { cause: error },
      )
    case 'CDN_TOO_MANY_DOMAINS':
      return new ServiceStateError(
        `${given} cannot be added: namespace ${namespaceId} holds the most custom domains the service allows a ` +
          `namespace (10). Remove one it no longer needs, or give this ${inputName(Input.Domain)} to another namespace. ${quoted}`,
        { cause: error },
      )
    case 'CDN_INVALID_DOMAIN':
      return new UsageError(
        `${given} is refused by the service as a custom domain (a domain under its own CDN domain ` +
          `is never taken): give a domain of your own. ${quoted}`,
        { cause: error },
      )
  }
  return undefined
}

async function findDomain(
  { client, inputs }: Provisioning,
  namespaceId: string,
  domain: string,
): Promise<DomainStatus | undefined> {
  const { namespace } = await client.getNamespace(inputs.connection.gameId, namespaceId)
  const entry = namespace.config.cdn.domains.find((e) => e.domain === domain)
  return (
    entry && {
      status: entry.verification_status ?? 'unknown',
      cnameRecord: entry.verification_method?.http?.cname_record ?? undefined,
    }
  )
}

function isNameTaken(error: unknown): boolean {
  if (!(error instanceof ServiceError) || error.code !== 'VALIDATION_ERROR') return false
  const paths = (error.metadata as { errors?: ValidationError[] } | undefined)?.errors
  if (Array.isArray(paths) && paths.some((e) => e.path.join('.') === 'name-id.not-unique')) return true
  return error.serviceMessage.includes('name-id.not-unique')
}
