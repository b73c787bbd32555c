import type { ServiceClient } from './api/client.ts'
import { ValidationFailedError } from './api/errors.ts'
import { describeValidationPath, matchmakerConfigProblems } from './api/rules.ts'
import type { ValidationError } from './api/types.ts'
import type { DeployInputs } from './inputs.ts'
import type { Logger } from './logger.ts'

export interface Provisioned {
  namespaceId: string | undefined
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

/** Creates the namespace, adds the domain and has the service validate the matchmaker config. */
export async function provision(
  client: ServiceClient,
  inputs: DeployInputs,
  logger: Logger,
): Promise<Provisioned> {
  let namespaceId = inputs.namespaceId
  let namespaceCreated = false
  if (inputs.namespace) {
    const { nameId, displayName, versionId } = inputs.namespace
    const created = await client.createNamespace(inputs.gameId, {
      name_id: nameId,
      display_name: displayName,
      version_id: versionId,
    })
    namespaceId = created.namespace_id
    namespaceCreated = true
    logger.info(`Created namespace ${nameId} (${namespaceId}) on version ${versionId}`)
  }
  if (inputs.domain && namespaceId) {
    await client.addNamespaceDomain(inputs.gameId, namespaceId, inputs.domain)
    logger.info(`Added domain ${inputs.domain} to namespace ${namespaceId}`)
  }
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
  return { namespaceId, namespaceCreated, domain: inputs.domain, matchmakerValidated }
}

function matchmakerError(errors: ValidationError[]): ValidationFailedError {
  return new ValidationFailedError(
    'The matchmaker config',
    errors.map(({ path }) => ({ path, description: describeValidationPath(path) })),
  )
}
