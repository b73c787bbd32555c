// The body of a version creation or validation as the service deserializes it: a field of the wrong
// type, a missing required field, a number outside a signed 32-bit field or an id that is not a UUID
// does not parse (400 API_BAD_BODY). Unknown fields are ignored.

import { I32_MAX } from '../api/rules.ts'
import type { VersionConfig } from './matchmaker-config.ts'
import { isJsonObject, stringField, type JsonObject } from './body.ts'
import { badBody } from './errors.ts'
import { isUuid } from './router.ts'

/** Checks a value found at `at` (a readable path for the error message); throws API_BAD_BODY. */
type Check = (value: unknown, at: string) => void

const fail = (at: string, expected: string) => badBody(`"${at}" must be ${expected}`)

const string: Check = (value, at) => {
  if (typeof value !== 'string') throw fail(at, 'a string')
}
const boolean: Check = (value, at) => {
  if (typeof value !== 'boolean') throw fail(at, 'a boolean')
}
const i32: Check = (value, at) => {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < -I32_MAX - 1 || value > I32_MAX) {
    throw fail(at, 'a signed 32-bit integer')
  }
}
const i64: Check = (value, at) => {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw fail(at, 'an integer')
}
const uuid: Check = (value, at) => {
  if (typeof value !== 'string' || !isUuid(value)) throw fail(at, 'a UUID')
}
const oneOf =
  (...values: string[]): Check =>
  (value, at) => {
    if (typeof value !== 'string' || !values.includes(value)) throw fail(at, `one of ${values.join(', ')}`)
  }
const arrayOf =
  (item: Check): Check =>
  (value, at) => {
    if (!Array.isArray(value)) throw fail(at, 'an array')
    value.forEach((each, index) => item(each, `${at}[${index}]`))
  }
const mapOf =
  (item: Check): Check =>
  (value, at) => {
    if (!isJsonObject(value)) throw fail(at, 'an object')
    for (const [key, each] of Object.entries(value)) item(each, `${at}.${key}`)
  }
/** An object: fields marked optional may be absent or null, the others must be there. */
const object =
  (fields: Record<string, Check>, optional: readonly string[] = Object.keys(fields)): Check =>
  (value, at) => {
    if (!isJsonObject(value)) throw fail(at, 'an object')
    for (const [key, check] of Object.entries(fields)) {
      const field = value[key]
      if (field === undefined || field === null) {
        if (optional.includes(key)) continue
        throw fail(`${at}.${key}`, 'present')
      }
      check(field, `${at}.${key}`)
    }
  }

const portRange = object({ min: i32, max: i32 }, [])
const protocol = oneOf('http', 'https', 'tcp', 'tcp_tls', 'udp')
const networkMode = oneOf('bridge', 'host')
const idleLobbies = object({ min: i32, max: i32 }, [])
const region = object({ tier: string, idle_lobbies: idleLobbies })
const docker = object({
  dockerfile: string,
  image: string,
  image_id: uuid,
  args: arrayOf(string),
  env: mapOf(string),
  network_mode: networkMode,
  ports: mapOf(
    object({
      port: i32,
      port_range: portRange,
      protocol,
      proxy: oneOf('none', 'game_guard'),
      dev_port: i32,
      dev_port_range: portRange,
      dev_protocol: protocol,
    }),
  ),
})
const verification = object({ url: string, headers: mapOf(string) }, [])
const identityRequirement = oneOf('none', 'guest', 'registered')
const actionFields = { enabled: boolean, identity_requirement: identityRequirement, verification }
const actionOptional = ['identity_requirement', 'verification']
const gameMode = object({
  regions: mapOf(region),
  max_players: i32,
  max_players_direct: i32,
  max_players_party: i32,
  docker,
  listable: boolean,
  taggable: boolean,
  allow_dynamic_max_players: boolean,
  actions: object({
    find: object(actionFields, actionOptional),
    join: object(actionFields, actionOptional),
    create: object(
      { ...actionFields, enable_public: boolean, enable_private: boolean, max_lobbies_per_identity: i32 },
      [...actionOptional, 'enable_public', 'enable_private', 'max_lobbies_per_identity'],
    ),
  }),
  tier: string,
  idle_lobbies: idleLobbies,
})
const lobbyGroup = object(
  {
    name_id: string,
    regions: arrayOf(
      object(
        {
          region_id: uuid,
          tier_name_id: string,
          idle_lobbies: object({ min_idle_lobbies: i32, max_idle_lobbies: i32 }, []),
        },
        ['idle_lobbies'],
      ),
    ),
    max_players_normal: i32,
    max_players_direct: i32,
    max_players_party: i32,
    runtime: object({
      docker: object(
        {
          build_id: uuid,
          args: arrayOf(string),
          env_vars: arrayOf(object({ key: string, value: string }, [])),
          network_mode: networkMode,
          ports: arrayOf(
            object({ label: string, target_port: i32, port_range: portRange, proxy_protocol: protocol }, [
              'target_port',
              'port_range',
            ]),
          ),
        },
        ['build_id', 'network_mode'],
      ),
    }),
  },
  [],
)
const matchmaker = object({
  game_modes: mapOf(gameMode),
  captcha: object(
    {
      requests_before_reverify: i32,
      verification_ttl: i64,
      hcaptcha: object({ level: oneOf('easy', 'moderate', 'difficult', 'always_on') }, []),
      turnstile: object({ site_key: string, secret_key: string }, []),
    },
    ['hcaptcha', 'turnstile'],
  ),
  dev_hostname: string,
  regions: mapOf(region),
  max_players: i32,
  max_players_direct: i32,
  max_players_party: i32,
  docker,
  tier: string,
  idle_lobbies: idleLobbies,
  lobby_groups: arrayOf(lobbyGroup),
})
const cdn = object({
  build_command: string,
  build_output: string,
  build_env: mapOf(string),
  site_id: uuid,
  routes: arrayOf(
    object(
      {
        glob: string,
        priority: i32,
        middlewares: arrayOf(
          object(
            {
              kind: object({
                custom_headers: object({ headers: arrayOf(object({ name: string, value: string }, [])) }, []),
              }),
            },
            [],
          ),
        ),
      },
      [],
    ),
  ),
})
const anyObject: Check = (value, at) => {
  if (!isJsonObject(value)) throw fail(at, 'an object')
}
const config: (value: unknown, at: string) => asserts value is VersionConfig = object({
  engine: anyObject,
  cdn,
  matchmaker,
  kv: anyObject,
  identity: anyObject,
})

export interface VersionBody {
  displayName: string
  config: VersionConfig
}

/** The display name and config of a version body, checked to parse as the service's would. */
export function versionBody(body: JsonObject): VersionBody {
  const displayName = stringField(body, 'display_name')
  const value = body.config
  if (value === undefined || value === null) throw fail('config', 'present')
  config(value, 'config')
  return { displayName, config: value }
}
