// The wire under the client: the connection pool, reading an answer within its limits, and what an
// answer or a failure of it says (a refusal's concern, an answer that is not the service's).
import { Agent, EnvHttpProxyAgent, type Dispatcher } from 'undici'
import { ServiceError, UnexpectedAnswerError, type Concern, type Explain } from './errors.ts'
import { DEADLINE_EXCEEDED, networkFailure } from '../common/network.ts'
import { RAY_ID_HEADER, type ServiceErrorBody } from './types.ts'
import type { Operation } from './operations.ts'
import { anObject } from './shape.ts'
import { formatBytes } from '../common/format.ts'
import { redact } from '../common/secrets.ts'

export const USER_AGENT = 'gamehost/0.1'
/** The variables that name a proxy, lower case first as curl and @actions/http-client read them. */
export const PROXY_VARIABLES = ['https_proxy', 'HTTPS_PROXY', 'http_proxy', 'HTTP_PROXY']

/**
 * One keep-alive pool for every call of a run. Behind a proxy, HTTPS_PROXY / HTTP_PROXY and NO_PROXY
 * are read as curl reads them. (undici warns once when it makes that agent: it is made only when a
 * proxy is named.)
 */
export function createAgent(): Agent | EnvHttpProxyAgent {
  const options = { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 120_000, connect: { timeout: 15_000 } }
  if (!PROXY_VARIABLES.some((name) => process.env[name])) return new Agent(options)
  // Handed on to its ProxyAgents: a plain-http URL is sent to the proxy as is, as curl does.
  return new EnvHttpProxyAgent({ ...options, proxyTunnel: false })
}

/** The largest answer read: a site's presigned requests for 20,000 files are some MB. */
export const ANSWER_BYTES_LIMIT = 128 * 1024 * 1024

export interface Exchange {
  response: Dispatcher.ResponseData
  text: string
}

/** What the operation promises, from a 200; a ServiceError for a refusal, or for an answer that is not JSON. */
export function answerOf<T>(op: Operation, { response, text }: Exchange, explain: Explain): T {
  const rayId = header(response.headers, RAY_ID_HEADER)
  const parsed = parseJson(text)
  if (response.statusCode === 200 && !anObject(parsed, '')) {
    const problem = op.answer?.(parsed, '')
    if (problem)
      throw new UnexpectedAnswerError(
        `${op.name}: the service's answer is not what the operation promises: ${problem}` +
          (rayId ? ` (ray id ${rayId})` : ''),
      )
    return parsed as T
  }
  const errorBody: Partial<ServiceErrorBody> =
    isErrorBody(parsed) && response.statusCode !== 200
      ? parsed
      : {
          code: `HTTP_${response.statusCode}`,
          message:
            response.statusCode === 200
              ? 'the answer was not a JSON object'
              : `the answer was not a service error body: ${redact(text).slice(0, 200) || '(empty)'}`,
        }
  const serviceBody = errorBody === parsed
  throw new ServiceError({
    operation: op.name,
    status: response.statusCode,
    body: errorBody,
    rayId,
    retryAfter: header(response.headers, 'retry-after'),
    ...explained(
      explain,
      serviceBody
        ? refusalConcern(op, response.statusCode, errorBody.code ?? '')
        : foreignAnswer(response.statusCode, header(response.headers, 'content-type')),
    ),
  })
}

/** A plain hint (a gateway's page) as it is. */
function explained(explain: Explain, found: Concern | { hint?: string } | undefined) {
  if (!found || !('about' in found)) return found ?? {}
  return { concern: found, ...explain(found) }
}

/** The service's codes for a token it refuses (400, 401, 403): the token's fault, or the game's. */
const TOKEN_REFUSALS = new Set([
  'TOKEN_INVALID',
  'API_UNAUTHORIZED',
  'CLAIMS_ENTITLEMENT_EXPIRED',
  'API_FORBIDDEN',
])

function refusalConcern(op: Operation, status: number, code: string): Concern | undefined {
  if (status === 500 && code === 'ERROR') return { about: 'unknown-id', operation: op.name }
  // Every id in a path is checked as a UUID first: the service knowing no such route is the base URL's path.
  if (status === 404 && code === 'API_NOT_FOUND') return { about: 'base-url', problem: 'no-route' }
  if ((status === 400 || status === 401 || status === 403) && TOKEN_REFUSALS.has(code))
    return { about: 'token', code }
  return undefined
}

/**
 * An answer that is no answer of the service (an HTML page, a 404 without the service's error body):
 * the base URL most likely reaches another server (a web site, a proxy's page, the wrong path). A
 * gateway's page for a 5xx or a 429 is an outage in front of the right server: named, not blamed.
 */
function foreignAnswer(status: number, contentType: string | undefined): Concern | { hint?: string } {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
  if (type === 'application/json' && status === 200) return {}
  const what = type === 'text/html' ? 'an HTML page' : type ? `${type}, not the service's JSON` : 'no JSON'
  if (status >= 500 || status === 429)
    return { hint: `The answer is not the service's (${what}): a proxy or gateway in front of it answered` }
  return { about: 'base-url', problem: 'foreign', what }
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** The answer's body as text (no byte-order mark). */
export async function readAnswer(
  op: Operation,
  response: Dispatcher.ResponseData,
  limit: number,
): Promise<string> {
  const { body } = response
  const tooLarge = () => {
    // Destroying the body errors it; nobody reads it any more, so that error must not go uncaught.
    body.on('error', () => {})
    body.destroy()
    return new UnexpectedAnswerError(
      `${op.name}: the service's answer is larger than ${formatBytes(limit)}, more than any answer of it can be; not read further`,
    )
  }
  if (Number(header(response.headers, 'content-length')) > limit) throw tooLarge()
  const chunks: Buffer[] = []
  let length = 0
  for await (const chunk of body as AsyncIterable<Buffer>) {
    length += chunk.length
    if (length > limit) throw tooLarge()
    chunks.push(chunk)
  }
  return new TextDecoder().decode(Buffer.concat(chunks))
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

function isErrorBody(value: unknown): value is ServiceErrorBody {
  return typeof value === 'object' && value !== null && typeof (value as { code?: unknown }).code === 'string'
}

/** Why a call was aborted past its deadline: a network failure of its own code. */
export class DeadlineError extends Error {
  override name = 'DeadlineError'
  readonly code = DEADLINE_EXCEEDED
  constructor(deadlineMs: number) {
    super(`the answer was not complete within ${deadlineMs / 1000} s, the deadline of an API call`)
  }
}

const CLOSED = 'the connection was closed before the answer was complete'
const UNRESOLVED = 'the host name could not be resolved'
const REASONS: Record<string, (seconds: string) => string> = {
  UND_ERR_HEADERS_TIMEOUT: (seconds) => `no answer within ${seconds}`,
  UND_ERR_BODY_TIMEOUT: (seconds) => `the answer stopped arriving for ${seconds}`,
  UND_ERR_SOCKET: () => CLOSED,
  ECONNRESET: () => CLOSED,
  EPIPE: () => CLOSED,
  UND_ERR_CONNECT_TIMEOUT: () => 'could not connect within the connect time-out',
  ECONNREFUSED: () => 'the connection was refused',
  ENOTFOUND: () => UNRESOLVED,
  EAI_AGAIN: () => UNRESOLVED,
}

/** What went wrong on the wire, in words, with undici's code: not "Headers Timeout Error". */
export function networkReason(error: unknown, timeoutMs: number): string {
  const code = (error as { code?: unknown }).code ?? (error as { cause?: { code?: unknown } }).cause?.code
  if (code === DEADLINE_EXCEEDED) return `${(error as Error).message} (${code})`
  if (typeof code === 'string' && Object.hasOwn(REASONS, code))
    return `${REASONS[code]!(`${timeoutMs / 1000} s`)} (${code})`
  const failure = networkFailure(error)
  if (failure?.kind === 'tls') return `the TLS handshake failed (${failure.code})`
  const message = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error)
  return typeof code === 'string' ? `${message} (${code})` : message
}
