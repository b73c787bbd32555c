// The validation rules the service applies, as read from its source. The emulator enforces them;
// the client checks them before the first call so a bad input never reaches the service.

/** The matchmaker config's numbers are signed 32-bit on the service: 2^31 or more does not parse. */
export const I32_MAX = 0x7fff_ffff
export const NAME_ID_MAX = 16
export const DISPLAY_NAME_MAX_BYTES = 128
const GROUP_DISPLAY_NAME_MAX_BYTES = 24
const LOBBY_COUNT_LIMIT = 32768
const DOMAIN_MAX = 255
export const DOMAINS_PER_NAMESPACE_MAX = 10
const SERVER_TAGS_MAX = 8
const TAG_KEY_MAX_BYTES = 32
const TAG_VALUE_MAX_BYTES = 1024
export const SERVERS_PAGE_SIZE = 64
export const SITE_BYTES_LIMIT = 1_000_000_000
/** Part size of a CDN site's multipart files (5 MiB or more, since v24.6): the emulator plans with it. */
export const PART_SIZE = 100 * 1024 * 1024
export const MAX_PARTS = 10_000
/** The store keeps each file at the key `<upload_id>/<path>`, at most 1,024 bytes (S3's limit). */
export const OBJECT_KEY_MAX_BYTES = 1024
const UPLOAD_KEY_PREFIX_BYTES = '00000000-0000-0000-0000-000000000000/'.length
export const SITE_PATH_MAX_BYTES = OBJECT_KEY_MAX_BYTES - UPLOAD_KEY_PREFIX_BYTES

export const NAME_ID = /^[a-z0-9]+(-[a-z0-9]+)*$/
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const DOMAIN = /^[0-9a-z.-]+$/

export function isI32(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= -I32_MAX - 1 && value <= I32_MAX
}

export function isU64(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

/**
 * Error suffixes (`too-short`, `too-long`, `invalid`) of a namespace `name_id`; empty when valid.
 * The service's pattern has the length in it, so a name too long is `invalid` as well.
 */
export function nameIdProblems(nameId: string): string[] {
  if (nameId.length < 1) return ['too-short']
  if (nameId.length > NAME_ID_MAX) return ['too-long', 'invalid']
  return NAME_ID.test(nameId) ? [] : ['invalid']
}

/** The only whitespace a single space that is neither leading, trailing nor doubled. */
export function displayNameProblems(name: string, maxBytes = DISPLAY_NAME_MAX_BYTES): string[] {
  const bytes = Buffer.byteLength(name, 'utf8')
  if (bytes < 1) return ['too-short']
  if (bytes > maxBytes) return ['too-long']
  const badWhitespace =
    /[^\S ]/.test(name) || name.startsWith(' ') || name.endsWith(' ') || name.includes('  ')
  return badWhitespace ? ['invalid'] : []
}

/** In the order the service reports them. */
export function createNamespaceProblems(displayName: string, nameId: string): string[][] {
  return [
    ...displayNameProblems(displayName).map((p) => ['display-name', p]),
    ...nameIdProblems(nameId).map((p) => ['name-id', p]),
  ]
}

/**
 * The error paths of `groups.validate` for a group display name (up to 24 bytes). The service's
 * display-name check has the length in it, so a name too long is `display-name-invalid` as well.
 */
export function groupDisplayNameProblems(name: string): string[][] {
  const problems = displayNameProblems(name, GROUP_DISPLAY_NAME_MAX_BYTES)
  if (problems[0] === 'too-long') problems.push('invalid')
  return problems.map((p) => [p === 'invalid' ? 'display-name-invalid' : p])
}

/** The kinds of client whose player limit the service derives from max_players. */
const MAX_PLAYERS_KINDS = ['client', 'vpn', 'proxy', 'tor', 'hosting'] as const

/**
 * The error paths of the matchmaker config validation, for values from 0 to 2^31 - 1. A max_players
 * below 1 fails six checks: the value itself and the limit of each kind of client.
 */
export function matchmakerConfigProblems(lobbyCountMax: number, maxPlayers: number): string[][] {
  const errors: string[][] = []
  if (lobbyCountMax < 1) errors.push(['lobby-count', 'too-low'])
  else if (lobbyCountMax >= LOBBY_COUNT_LIMIT) errors.push(['lobby-count', 'too-high'])
  if (maxPlayers < 1) {
    errors.push(['max-players', 'too-low'])
    for (const kind of MAX_PLAYERS_KINDS) errors.push(['max-players', kind, 'too-low'])
  }
  return errors
}

/** Why the service refuses a tag filter (a JSON object of string to string). */
export function serverTagsProblem(tags: unknown): string | undefined {
  if (typeof tags !== 'object' || tags === null || Array.isArray(tags))
    return 'expected a JSON object of string to string'
  const entries = Object.entries(tags)
  if (entries.length > SERVER_TAGS_MAX) return `at most ${SERVER_TAGS_MAX} tags are allowed`
  for (const [key, value] of entries) {
    if (typeof value !== 'string') return `the value of tag "${key}" is not a string`
    if (!bytesBetween(key, 1, TAG_KEY_MAX_BYTES)) return `tag keys must be 1 to ${TAG_KEY_MAX_BYTES} bytes`
    if (!bytesBetween(value, 1, TAG_VALUE_MAX_BYTES))
      return `tag values must be 1 to ${TAG_VALUE_MAX_BYTES} bytes`
  }
  return undefined
}

function bytesBetween(text: string, min: number, max: number): boolean {
  const bytes = Buffer.byteLength(text, 'utf8')
  return bytes >= min && bytes <= max
}

export function isValidDomain(domain: string): boolean {
  return domain.length >= 1 && domain.length <= DOMAIN_MAX && DOMAIN.test(domain)
}

/** RFC 1035, written without the root's trailing dot. */
const HOST_NAME_MAX = 253
const HOST_LABEL_MAX = 63

/**
 * Why a domain the service would take (isValidDomain) still cannot work as a host name. The client
 * checks it; the service, and so the emulator, checks only isValidDomain.
 */
export function hostNameProblem(domain: string): string | undefined {
  if (domain.endsWith('.') && domain.length > 1)
    return "it ends with '.', which the service would keep as part of another domain"
  if (domain.length > HOST_NAME_MAX) return `it is longer than ${HOST_NAME_MAX} characters`
  for (const label of domain.split('.')) {
    if (label === '') return "it has an empty label (a '.' at its start or end, or '..')"
    if (label.length > HOST_LABEL_MAX)
      return `its label '${label}' is longer than ${HOST_LABEL_MAX} characters`
    if (label.startsWith('-') || label.endsWith('-')) return `its label '${label}' starts or ends with '-'`
    if (!/^[a-z0-9-]+$/.test(label)) return `its label '${label}' holds more than a-z, 0-9 and '-'`
  }
  return undefined
}

export function describeValidationPath(path: readonly string[]): string {
  const key = path.join('.')
  const known: Record<string, string> = {
    'lobby-count.too-low': 'lobby_count_max must be at least 1',
    'lobby-count.too-high': `lobby_count_max must be below ${LOBBY_COUNT_LIMIT}`,
    'max-players.too-low': 'max_players must be at least 1',
    ...Object.fromEntries(
      MAX_PLAYERS_KINDS.map((kind) => [
        `max-players.${kind}.too-low`,
        `max_players must be at least 1 (the limit per ${kind === 'client' ? 'client' : `${kind} client`})`,
      ]),
    ),
    'name-id.too-short': 'the namespace name_id must not be empty',
    'name-id.too-long': `the namespace name_id must be at most ${NAME_ID_MAX} characters`,
    'name-id.invalid':
      'the namespace name_id may hold only a-z, 0-9 and single dashes between them (no leading, trailing or double dash)',
    'name-id.not-unique': 'a namespace with this name_id already exists in the game',
    'display-name.too-short': 'the display name must not be empty',
    'display-name.too-long': `the display name must be at most ${DISPLAY_NAME_MAX_BYTES} bytes`,
    'display-name.invalid':
      'the display name may contain only single spaces as whitespace, never leading, trailing or doubled',
    'too-short': 'the group display name must not be empty',
    'too-long': `the group display name must be at most ${GROUP_DISPLAY_NAME_MAX_BYTES} bytes`,
    'display-name-invalid':
      'the group display name may contain only single spaces as whitespace, never leading, trailing or doubled',
    'not-unique': 'a group with this display name already exists',
  }
  return known[key] ?? `invalid value at ${key}`
}

/** `lobby-count too high`. */
export function validationTitle(path: readonly string[]): string {
  const [field, ...rest] = path
  return rest.length ? `${field} ${rest.join(' ').replace(/-/g, ' ')}` : (field ?? '').replace(/-/g, ' ')
}

/** The parts the service answers for a file. The client never plans with it: it uploads what is listed. */
export function planParts(
  size: number,
  threshold: number,
  partSize = PART_SIZE,
): Array<[offset: number, length: number]> {
  if (size < threshold) return [[0, size]]
  const parts: Array<[number, number]> = []
  for (let offset = 0; offset < size; offset += partSize)
    parts.push([offset, Math.min(partSize, size - offset)])
  return parts
}
