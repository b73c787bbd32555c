// api-url, judged as it will be sent: undici reads it with the WHATWG parser, which takes
// `http:\\user:pass@host`, `http:/user:pass@host` and a URL with tabs or line breaks in it as
// `http://user:pass@host`. So the parsed URL is what is judged, never the text.

import type { UsageError } from '../api/errors.ts'
import { Input } from './constants.ts'
import { usage, type GetInput } from './common.ts'
import { inputName } from '../common/input-naming.ts'

interface ApiUrlJudgement {
  /** Every form of the user info it carries, as text could show it. */
  credentials: string[]
  /** Undefined when it is empty too: whether that is wrong is the reader's. */
  refusal: UsageError | undefined
  /** A URL that can be used but sends the token in clear. */
  warning: string | undefined
}

/** What the faces warn of before the run, in the log and again in its account. */
export function inputWarnings(get: GetInput): string[] {
  const { warning } = judgeApiUrl(get(Input.ApiUrl).trim())
  return warning ? [warning] : []
}

/** api-url trimmed, as the readers take it. */
export function judgeApiUrl(apiUrl: string): ApiUrlJudgement {
  const parsed = URL.parse(apiUrl)
  // A URL the parser refuses (a space in its host, a `#` in its password) may still hold credentials.
  const credentials = parsed ? parsedCredentials(parsed, apiUrl) : typedUserInfo(apiUrl)
  if (!apiUrl) return { credentials, refusal: undefined, warning: undefined }
  if (credentials.length) return { credentials, refusal: credentialsRefusal(), warning: undefined }
  const refusal = refusalOf(parsed, apiUrl)
  const warning = refusal || !parsed ? undefined : clearTextWarning(parsed)
  return { credentials, refusal, warning }
}

function credentialsRefusal(): UsageError {
  return usage`{api-url} carries credentials (user:password@host), which would be sent and logged with every call: give the base URL without them, and the secret in {token}. (The URL is not shown here.)`
}

function refusalOf(parsed: URL | null, raw: string): UsageError | undefined {
  // Whatever the parser made of it, text with an @ may hold a password: none of it is quoted.
  const hidden = raw.includes('@')
  const apiUrl = hidden ? '(not shown: it holds an @)' : `'${raw}'`
  const part = (text: string) => (hidden ? '' : ` (${text})`)
  if (!parsed) return usage`{api-url} ${apiUrl} is not a URL; give the base URL, like https://api.example.com`
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return usage`{api-url} ${apiUrl} must be an http:// or https:// URL`
  if (/\/cloud\/?$/i.test(parsed.pathname)) {
    const base = hidden ? parsed.origin : `${parsed.origin}${parsed.pathname.replace(/\/cloud\/?$/i, '')}`
    return usage`{api-url} ${apiUrl} ends in /cloud, which every call adds itself: give the base URL, ${base}`
  }
  // The client appends /cloud/… to the text: a query or fragment would swallow the call's path, and the
  // service's "no such route" would then blame a path.
  if (parsed.pathname !== '/')
    return usage`{api-url} ${apiUrl} has a path${part(parsed.pathname)}: the service's API is at the root of its host, and every call adds /cloud/... itself: give the base URL, ${parsed.origin}`
  if (parsed.search)
    return usage`{api-url} ${apiUrl} has a query${part(parsed.search)}, which would swallow the path of every call: give the base URL without it, ${parsed.origin}`
  if (parsed.hash)
    return usage`{api-url} ${apiUrl} has a fragment${part(parsed.hash)}, which would swallow the path of every call: give the base URL without it, ${parsed.origin}`
  return undefined
}

function clearTextWarning(parsed: URL): string | undefined {
  if (parsed.protocol !== 'http:' || isLoopback(parsed.hostname)) return undefined
  return `${inputName(Input.ApiUrl)} ${parsed.origin} is plain http:// to a host that is not this machine: the token travels in clear text, readable and replayable by anyone on the way. Use https://`
}

/** localhost, 127.0.0.0/8 and ::1. */
function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase()
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  )
}

/** The username and password as the parser keeps them (percent-encoded), decoded, and as typed. */
function parsedCredentials(parsed: URL, apiUrl: string): string[] {
  if (!parsed.username && !parsed.password) return []
  const parts = [parsed.username, parsed.password].filter(Boolean)
  const forms = [...parts, ...parts.map(percentDecoded), `${parsed.username}:${parsed.password}`]
  forms.push(`${percentDecoded(parsed.username)}:${percentDecoded(parsed.password)}`)
  return unique([...forms, ...typedUserInfo(apiUrl)])
}

/** The user info as written: after the scheme and its slashes (either way, tabs and line breaks skipped), up to the last `@`. */
function typedUserInfo(apiUrl: string): string[] {
  const start = /^[\0- ]*[a-z][a-z0-9+.\t\n\r-]*:[/\\\t\n\r]*/i.exec(apiUrl)
  const at = apiUrl.lastIndexOf('@')
  if (!start || at < start[0].length) return []
  const userInfo = apiUrl.slice(start[0].length, at)
  const colon = userInfo.indexOf(':')
  const parts = colon < 0 ? [userInfo] : [userInfo.slice(0, colon), userInfo.slice(colon + 1)]
  const forms = [userInfo, ...parts]
  // The parser drops tabs and line breaks: the same text without them is what it keeps.
  return unique([...forms, ...forms.map((form) => form.replace(/[\t\n\r]/g, ''))])
}

function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

function unique(texts: string[]): string[] {
  return [...new Set(texts.filter(Boolean))]
}
