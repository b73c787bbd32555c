// Reading and checking inputs, shared by every action and the CLI. Each error names the input, so a
// step fails with one message saying which input to fix.

import { UsageError } from '../api/errors.ts'
import { I32_MAX, NAME_ID_MAX, UUID, isValidDomain, nameIdProblems } from '../api/rules.ts'
import { Input } from './constants.ts'
import { MAX_VERIFY_TIMEOUT_SECONDS } from '../common/timeouts.ts'
import { inputRow } from './table.ts'
import { inputAssignment, inputName, inputSource } from '../common/input-naming.ts'
import { judgeApiUrl } from './api-url.ts'

/** Each `{input}` named as the face names inputs (`--namespace` in the CLI). */
export function namedInputs(text: string): string {
  return text.replace(/\{([a-z][a-z-]*)\}/g, (_, input: string) => inputName(input))
}

/** usage`{namespace} is empty`: a UsageError naming its `{input}`s as the face does. */
export function usage(parts: TemplateStringsArray, ...values: unknown[]): UsageError {
  return new UsageError(String.raw({ raw: parts.map(namedInputs) }, ...values))
}

/** Reads one input by name: core.getInput in an action, the flags (and GAMEHOST_TOKEN) in the CLI. */
export type GetInput = (name: string) => string

export interface Connection {
  apiUrl: string
  /** Empty when not given: whether that is an error is for the caller to say (a dry run needs none). */
  token: string
  gameId: string
}

export interface ReadOptions {
  /** The error for an empty token; default the action's. */
  missingToken?: () => UsageError
}

/** `gameIdPurpose` ends the message of a missing game-id. */
export function readConnection(
  get: GetInput,
  gameIdPurpose = 'the id of the game',
  options: { optional?: boolean } = {},
): Connection {
  const apiUrl = get(Input.ApiUrl).trim()
  const gameId = get(Input.GameId).trim()
  // A run that calls nothing (a dry run) needs none of them: what is given is still checked.
  if (apiUrl || !options.optional) checkApiUrl(apiUrl)
  const token = checkToken(get(Input.Token).trim())
  if (!gameId && options.optional) return { apiUrl, token, gameId: '' }
  if (!gameId) throw new UsageError(`${inputSource(Input.GameId)} is required: ${gameIdPurpose}`)
  return { apiUrl, token, gameId: checkUuid(Input.GameId, gameId) }
}

function checkApiUrl(apiUrl: string): void {
  if (!apiUrl)
    throw new UsageError(
      `${inputSource(Input.ApiUrl)} is required: the base URL of the service, like https://api.example.com`,
    )
  const { refusal } = judgeApiUrl(apiUrl)
  if (refusal) throw refusal
}

// undici would refuse a token it cannot send in a header on the first call, with a message that names
// neither the input nor where it is wrong.
function checkToken(token: string): string {
  const index = token.search(/[^\x20-\x7e\x80-\xff]/)
  if (index < 0) return token
  const code = token.charCodeAt(index)
  const what =
    code === 0x0a || code === 0x0d
      ? 'a line break'
      : code > 0xff
        ? 'a character that is not Latin-1'
        : 'a control character'
  throw usage`{token} holds ${what} (at character ${index + 1} of ${token.length}), which cannot be sent in an HTTP header: copy the token again, on one line with nothing around it (the token is not shown here)`
}

/** The service answers an id that is no UUID with a puzzling 404 "route not found". */
export function checkUuid(input: string, id: string): string {
  if (UUID.test(id)) return id
  throw new UsageError(
    `${inputName(input)} '${id}' is not an id of the service: ids are UUIDs, like 4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86`,
  )
}

export function readRequiredId(get: GetInput, input: string, what: string): string {
  const value = get(input).trim()
  if (!value) throw new UsageError(`${inputSource(input)} is required: ${what}`)
  return checkUuid(input, value)
}

/** The token is required. */
export function readRequiredConnection(get: GetInput, options: ReadOptions = {}): Connection {
  const connection = readConnection(get)
  if (!connection.token)
    throw options.missingToken
      ? options.missingToken()
      : usage`{token} is empty: pass the service token from a secret, e.g. token: \${{ secrets.GAMEHOST_TOKEN }}`
  return connection
}

export function readOptional(get: GetInput, input: string): string | undefined {
  return get(input).trim() || undefined
}

export function readOptionalId(get: GetInput, input: string): string | undefined {
  const id = readOptional(get, input)
  return id && checkUuid(input, id)
}

/** An empty input stands for its default in the table of inputs. */
function valueOf(get: GetInput, input: string): string {
  return get(input).trim() || (inputRow(input)?.default ?? '')
}

/** YAML 1.2 core schema booleans, as core.getBooleanInput reads them. */
export function readBoolean(get: GetInput, input: string): boolean {
  const text = valueOf(get, input)
  if (['true', 'True', 'TRUE'].includes(text)) return true
  if (['false', 'False', 'FALSE'].includes(text)) return false
  throw new UsageError(`${inputName(input)} '${text}' must be true or false`)
}

export function readInteger(get: GetInput, input: string, min: number, max: number): number {
  return readOptionalInteger(input, valueOf(get, input), min, max)!
}

export function readOptionalInteger(
  input: string,
  raw: string,
  min: number,
  max: number,
): number | undefined {
  const text = raw.trim()
  if (!text) return undefined
  const value = /^\d+$/.test(text) ? Number(text) : NaN
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new UsageError(`${inputName(input)} '${text}' must be a whole number from ${min} to ${max}`)
  return value
}

export function readChoice<T extends string>(get: GetInput, input: string, choices: readonly T[]): T {
  const text = valueOf(get, input)
  if ((choices as readonly string[]).includes(text)) return text as T
  throw new UsageError(`${inputName(input)} '${text}' must be one of ${choices.join(', ')}`)
}

/** `needs` says what else they need when `hasNamespace` is false. */
export function readMatchmakerPair(
  get: GetInput,
  hasNamespace: boolean,
  needs: string,
): { lobbyCountMax: number; maxPlayers: number } | undefined {
  const lobbyCountMax = get(Input.LobbyCountMax).trim()
  const maxPlayers = get(Input.MaxPlayers).trim()
  if (!lobbyCountMax && !maxPlayers) return undefined
  const both = namedInputs('{lobby-count-max} and {max-players}')
  if (!lobbyCountMax || !maxPlayers) throw new UsageError(`${both} go together: give both or neither`)
  if (!hasNamespace) throw new UsageError(`${both} need ${needs}`)
  // The service's matchmaker config takes signed 32-bit numbers.
  return {
    lobbyCountMax: readOptionalInteger(Input.LobbyCountMax, lobbyCountMax, 0, I32_MAX)!,
    maxPlayers: readOptionalInteger(Input.MaxPlayers, maxPlayers, 0, I32_MAX)!,
  }
}

export function checkNameId(input: string, nameId: string): string {
  const problem = nameIdProblems(nameId)[0]
  if (!problem) return nameId
  const suggestion = nameIdLike(nameId)
  throw new UsageError(
    `${inputName(input)} '${nameId}' is ${problem === 'too-long' ? `longer than ${NAME_ID_MAX} characters` : 'not a valid name id'}: ` +
      `use 1 to ${NAME_ID_MAX} of a-z and 0-9, with single dashes between them (` +
      (suggestion ? `write ${inputAssignment(input, suggestion)}` : "like 'pr-42'") +
      ')',
  )
}

function nameIdLike(nameId: string): string | undefined {
  const like = nameId
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, NAME_ID_MAX)
    .replace(/^-+|-+$/g, '')
  return like && like !== nameId && !nameIdProblems(like).length ? like : undefined
}

/** A domain, or an http(s) origin with a port (an emulator); undefined: the service says. */
export function readCdnDomain(get: GetInput): string | undefined {
  const raw = get(Input.CdnDomain).trim()
  if (!raw) return undefined
  if (!raw.includes('://') && isValidDomain(raw)) return raw
  const url = raw.includes('://') ? URL.parse(raw) : null
  if (url && /^https?:$/.test(url.protocol) && url.pathname === '/' && !url.search && !url.username)
    return url.origin
  throw usage`{cdn-domain} '${raw}' is neither a domain (like rivet.game) nor an origin (like http://localhost:8080)`
}

const ON_VERIFY_FAILURE = ['rollback', 'fail', 'warn'] as const
export type OnVerifyFailure = (typeof ON_VERIFY_FAILURE)[number]

export type VerifySettings = ReturnType<typeof readVerify>

export function readVerify(get: GetInput) {
  return {
    enabled: readBoolean(get, Input.Verify),
    timeoutMs: 1000 * readInteger(get, Input.VerifyTimeout, 1, MAX_VERIFY_TIMEOUT_SECONDS),
    onFailure: readChoice(get, Input.OnVerifyFailure, ON_VERIFY_FAILURE),
  }
}

/** The service refuses a custom domain under the CDN domain itself (400 CDN_INVALID_DOMAIN). */
export function checkDomainOutsideCdn(domain: string | undefined, cdnDomain: string | undefined): void {
  if (!domain || !cdnDomain) return
  const host = (cdnDomain.includes('://') ? new URL(cdnDomain).hostname : cdnDomain).toLowerCase()
  if (domain !== host && !domain.endsWith(`.${host}`)) return
  throw usage`{domain} '${domain}' is under the service's CDN domain ${host}, which the service refuses as a custom domain (CDN_INVALID_DOMAIN): the namespace is served under ${host} already. Give a domain of your own, or leave {domain} empty`
}
