// `basic-auth`: the `user:password` a private preview's host asks for. The password never appears in
// a message: a problem with it is said without its value.

import { inspect } from 'node:util'
import { masked } from '../common/secrets.ts'
import { UsageError } from '../api/errors.ts'
import { inputName } from '../common/input-naming.ts'
import { usage } from './common.ts'

export interface BasicAuth {
  user: string
  password: string
}

/** Letters, digits and `. _ @ + -`: no `:` (it ends the user in a Basic header), nothing markdown reads. */
const USER = /^[A-Za-z0-9._@+-]{1,64}$/
/** GitHub masks the password in every line of the log: a short one would mask common words. */
const PASSWORD_MIN_CHARACTERS = 8
/** bcrypt reads the first 72 bytes of a password and ignores the rest. */
const PASSWORD_MAX_BYTES = 72
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/

export function readBasicAuth(raw: string): BasicAuth | undefined {
  if (!raw) return undefined
  const colon = raw.indexOf(':')
  if (colon < 0) throw usage`{basic-auth} must be user:password (one ':' after the user name): it has no ':'`
  const user = raw.slice(0, colon)
  const password = raw.slice(colon + 1)
  if (!USER.test(user))
    throw usage`{basic-auth}: the user name before ':' must be 1 to 64 letters, digits, '.', '_', '@', '+' or '-'${user ? '' : ' (it is empty)'}`
  if ([...password].length < PASSWORD_MIN_CHARACTERS)
    throw usage`{basic-auth}: the password after ':' must be at least ${PASSWORD_MIN_CHARACTERS} characters`
  if (Buffer.byteLength(password) > PASSWORD_MAX_BYTES)
    throw usage`{basic-auth}: the password after ':' must be at most ${PASSWORD_MAX_BYTES} bytes (bcrypt ignores the rest)`
  if (CONTROL.test(password))
    throw usage`{basic-auth}: the password has a line break or another control character`
  return hiddenPassword({ user, password })
}

/** As a log would show them (a debug line, a value inspected). */
function hiddenPassword(auth: BasicAuth): BasicAuth {
  const shown = { user: auth.user, password: masked(auth.password) }
  return { ...auth, toJSON: () => shown, [inspect.custom]: () => shown } as BasicAuth
}

export function basicAuthorization(auth: BasicAuth): string {
  return `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}`
}

/** What the log must never show of a `user:password` besides the whole value. */
export function basicAuthSecrets(raw: string): string[] {
  const colon = raw.indexOf(':')
  if (colon < 0) return []
  const password = raw.slice(colon + 1)
  return [password, Buffer.from(raw).toString('base64')].filter(Boolean)
}

/** from-basic-auth as an Authorization header: only its form is checked here, the host judges the rest. */
export function readHostAuthorization(raw: string, input: string): string | undefined {
  if (!raw) return undefined
  const colon = raw.indexOf(':')
  if (colon < 1) throw new UsageError(`${inputName(input)} must be user:password (a user, then ':')`)
  return `Basic ${Buffer.from(raw).toString('base64')}`
}
