import type { ServiceClient } from './api/client.ts'
import { ServiceError, UsageError, ValidationFailedError } from './api/errors.ts'
import { describeValidationPath, matchmakerConfigProblems } from './api/rules.ts'
import type { ValidationError } from './api/types.ts'
import { Input } from './constants.ts'
import type { DeployInputs } from './inputs.ts'
import type { Logger } from './logger.ts'
import type { PreviewState } from './preview.ts'

export interface Provisioned {
  /** The name_id of the namespace created or reused (namespace input). */
  nameId: string | undefined
  namespaceId: string | undefined
  /** Created by this run; false when it existed (namespace-id, or a re-run of a preview). */
  namespaceCreated: boolean
  domain: string | undefined
  matchmakerValidated: boolean
}

/**
 * Applies the service's matchmaker rules before anything is created: the service can only validate
 * a config against a namespace, and a namespace the deploy is about to create does not exist yet.
 */
export function checkMatchmakerConfig(matchmaker: DeployInputs['matchmaker']): void {
  if (!matchmaker) return
  const problems = matchmakerConfigProblems(matchmaker.lobbyCountMax, matchmaker.maxPlayers)
  if (problems.length) throw matchmakerError(problems.map((path) => ({ path })))
}

/**
 * Creates the namespace (or finds the one an earlier run created), adds the domain and has the
 * service validate the matchmaker config. `onNamespace` hears of the namespace as soon as it is known.
 */
export async function provision(
  client: ServiceClient,
  inputs: DeployInputs,
  logger: Logger,
  previous?: PreviewState,
  onNamespace?: (namespaceId: string) => void,
): Promise<Provisioned> {
  let namespaceId = inputs.namespaceId
  let namespaceCreated = false
  if (inputs.namespace) {
    const { nameId, displayName, versionId } = inputs.namespace
    try {
      const created = await client.createNamespace(inputs.gameId, {
        name_id: nameId,
        display_name: displayName,
        version_id: versionId,
      })
      namespaceId = created.namespace_id
      namespaceCreated = true
      logger.info(`Created namespace ${nameId} (${namespaceId}) on version ${versionId}`)
    } catch (error) {
      if (!isNameTaken(error)) throw error
      const remembered = previous?.namespaceNameId === nameId ? previous.namespaceId : undefined
      namespaceId = remembered ?? inputs.namespaceId
      if (!namespaceId) {
        throw new UsageError(
          `${Input.Namespace}: '${nameId}' exists already, and this run cannot tell its id (no preview comment ` +
            `remembers it). Pass ${Input.NamespaceId} with the id, from the ${Input.NamespaceId} output of the run ` +
            `that created it, to reuse it; or choose another ${Input.Namespace}.`,
          { cause: error },
        )
      }
      logger.info(
        `Namespace ${nameId} exists already: reusing ${namespaceId} ` +
          `(${remembered ? 'remembered by the preview comment' : `from ${Input.NamespaceId}`})`,
      )
    }
  }
  if (namespaceId) onNamespace?.(namespaceId)
  if (inputs.domain && namespaceId)
    await addDomain(client, inputs, namespaceId, namespaceCreated, logger, previous)
  let matchmakerValidated = false
  if (inputs.matchmaker && namespaceId) {
    const { errors } = await client.validateMatchmakerConfig(inputs.gameId, namespaceId, {
      lobby_count_max: inputs.matchmaker.lobbyCountMax,
      max_players: inputs.matchmaker.maxPlayers,
    })
    if (errors.length) throw matchmakerError(errors)
    matchmakerValidated = true
    logger.info(
      `Matchmaker config is valid: lobby_count_max ${inputs.matchmaker.lobbyCountMax}, max_players ${inputs.matchmaker.maxPlayers}`,
    )
  }
  return {
    nameId: inputs.namespace?.nameId,
    namespaceId,
    namespaceCreated,
    domain: inputs.domain,
    matchmakerValidated,
  }
}

/**
 * The service cannot list a namespace's domains, and answers CLOUD_HOSTNAME_TAKEN when a domain is
 * added again. On a namespace that existed before this run, that is most likely its own domain.
 */
async function addDomain(
  client: ServiceClient,
  inputs: DeployInputs,
  namespaceId: string,
  namespaceCreated: boolean,
  logger: Logger,
  previous: PreviewState | undefined,
): Promise<void> {
  const domain = inputs.domain!
  try {
    await client.addNamespaceDomain(inputs.gameId, namespaceId, domain)
    logger.info(`Added domain ${domain} to namespace ${namespaceId}`)
  } catch (error) {
    const taken = error instanceof ServiceError && error.code === 'CLOUD_HOSTNAME_TAKEN'
    if (!taken || namespaceCreated) throw error
    if (previous?.domain === domain && previous.namespaceId === namespaceId) {
      logger.info(`Domain ${domain} is already attached to namespace ${namespaceId}`)
    } else {
      logger.warning(
        `Domain ${domain} is taken: assuming an earlier run added it to namespace ${namespaceId}. ` +
          'If another namespace holds it, remove it there.',
      )
    }
  }
}

function isNameTaken(error: unknown): boolean {
  if (!(error instanceof ServiceError) || error.code !== 'VALIDATION_ERROR') return false
  const paths = (error.metadata as { errors?: ValidationError[] } | undefined)?.errors
  if (Array.isArray(paths) && paths.some((e) => e.path.join('.') === 'name-id.not-unique')) return true
  return error.serviceMessage.includes('name-id.not-unique')
}

function matchmakerError(errors: ValidationError[]): ValidationFailedError {
  return new ValidationFailedError(
    'The matchmaker config',
    errors.map(({ path }) => ({ path, description: describeValidationPath(path) })),
  )
}
