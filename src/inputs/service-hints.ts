// What the service's failures mean for the inputs: a Concern turned into the input to fix and a hint
// naming it as the face does.
import type { Concern, Explanation } from '../api/errors.ts'
import type { OperationName } from '../api/operations.ts'
import { namedInputs } from './common.ts'
import { inputName as n } from '../common/input-naming.ts'

type Hint = { hint: () => string; inputs: readonly string[] }

/** It points at its `{input}`s unless told others. */
function hint(text: string, inputs = [...text.matchAll(/\{([a-z-]+)\}/g)].map((match) => match[1]!)): Hint {
  return { hint: () => namedInputs(text), inputs }
}

const unknownId = (...inputs: string[]): Hint =>
  hint(
    `The service answers this for an unknown id: check ${inputs.map((input) => `{${input}}`).join(' and ')}`,
  )

/** The service answers an unknown id with 500 ERROR. */
const INTERNAL_ERROR_HINTS: Record<OperationName, Hint> = {
  'servers.list': hint(
    'The service answers this for an unknown id: check {environment-id} (or the paging cursor)',
  ),
  'games.namespaces.logs.getNamespaceLobby': unknownId('namespace-id', 'lobby-id'),
  'games.namespaces.validateGameNamespaceMatchmakerConfig': unknownId('namespace-id'),
  'games.avatars.listGameCustomAvatars': unknownId('game-id'),
  'games.namespaces.createGameNamespace': unknownId('version-id'),
  'groups.validate': hint('The service could not check the name: check {group-display-name}'),
  'games.namespaces.addNamespaceDomain': hint(
    'The service answers this for an unknown namespace, or a domain the namespace already has: check {namespace-id} (or {namespace}) and {domain}',
  ),
  'games.cdn.createGameCdnSite': hint(
    'The service answers this for a site display name it refuses or a file path given twice: check {site-name} and {files}',
  ),
  'games.getGameById': unknownId('game-id'),
  'games.namespaces.getGameNamespaceById': unknownId('namespace-id'),
  'games.namespaces.removeNamespaceDomain': unknownId('namespace-id'),
  'cloud.games.namespaces.updateNamespaceCdnAuthUser': unknownId('namespace-id'),
  'cloud.games.namespaces.setNamespaceCdnAuthType': unknownId('namespace-id'),
  'cloud.games.namespaces.removeNamespaceCdnAuthUser': unknownId('namespace-id'),
  'games.versions.getGameVersionById': unknownId('version-id'),
  'games.versions.validateGameVersion': hint(
    'The service could not read the config it was given: check {version-id} (the version the new one is made from) and {headers}',
  ),
  'games.versions.reserveVersionName': unknownId('game-id'),
  'games.versions.createGameVersion': hint(
    "The service answers this when the config's cdn.site_id is not a completed site of the game, or a route holds more than one header: check {headers} (one header per glob) and {version-id} (the version the new one is made from)",
  ),
  'games.namespaces.updateGameNamespaceVersion': unknownId('namespace-id', 'version-id'),
  'games.namespaces.getGameNamespaceVersionHistoryList': unknownId('namespace-id'),
  'cloud.bootstrap': hint(
    'The service could not say which domain it serves namespaces under: set {cdn-domain} to that domain',
  ),
  'uploads.complete': hint(
    'The service answers this when the upload is unknown or a part of it is missing: check that nothing changed the {files} under path during the upload',
    ['path'],
  ),
}

const TOKEN_HINTS: Record<string, Hint> = {
  TOKEN_INVALID: hint(
    'The service does not know this token (mistyped, cut short, or revoked): check {token}',
  ),
  API_UNAUTHORIZED: hint(
    'The service got no bearer token it could read: check {token} (an empty or missing secret?)',
  ),
  CLAIMS_ENTITLEMENT_EXPIRED: hint('The token has expired: make a new one and put it in {token}'),
  API_FORBIDDEN: hint(
    'The token does not grant access to this game (a token of another game, or a game that does not exist): check {game-id}, and that {token} is a token of that game',
  ),
}

function baseUrlHint(concern: Extract<Concern, { about: 'base-url' }>): string {
  const url = n('api-url')
  switch (concern.problem) {
    case 'unreached':
      return `nothing at ${url} has answered in this run; check ${url} (its host and port)`
    case 'no-route':
      return (
        `The service has no such route: ${url} has a path it should not have (every call adds /cloud/...). ` +
        `Check ${url}: the base URL of the service's API, such as https://api.example.com`
      )
    case 'foreign':
      return (
        `The answer is not the service's (${concern.what}): ${url} reaches another server. ` +
        `Check ${url}: the base URL of the service's API (such as https://api.example.com), not a web page`
      )
  }
}

/** Every client of a run explains with it. */
export function explainServiceFailure(concern: Concern): Explanation | undefined {
  if (concern.about === 'base-url') return { hint: baseUrlHint(concern), inputs: ['api-url'] }
  const known =
    concern.about === 'token'
      ? Object.hasOwn(TOKEN_HINTS, concern.code) && TOKEN_HINTS[concern.code]
      : INTERNAL_ERROR_HINTS[concern.operation as OperationName]
  return known ? { hint: known.hint(), inputs: known.inputs } : undefined
}
