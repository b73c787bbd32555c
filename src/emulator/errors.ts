// The error codes the emulator answers with, their HTTP status and the text of their documentation page.

interface ErrorKind {
  status: number
  doc: string
}

export const ERROR_KINDS = {
  API_NOT_FOUND: {
    status: 404,
    doc: 'The requested endpoint was not found. Ids in paths are UUIDs: a path segment that is not one matches no route.',
  },
  API_METHOD_NOT_ALLOWED: { status: 405, doc: 'The endpoint exists, but not with this HTTP method.' },
  API_BODY_TOO_LARGE: {
    status: 413,
    doc: 'The request body is larger than the service accepts; it was refused before it was read.',
  },
  API_UNAUTHORIZED: {
    status: 401,
    doc: 'No bearer token was provided. Send the token as `Authorization: Bearer <token>`; the prefix "Bearer " is required.',
  },
  TOKEN_INVALID: { status: 400, doc: 'The bearer token is malformed or unknown.' },
  CLAIMS_ENTITLEMENT_EXPIRED: { status: 401, doc: 'The bearer token has expired. Create a new token.' },
  API_FORBIDDEN: { status: 403, doc: 'The bearer token does not grant access to this game.' },
  API_RATE_LIMIT: {
    status: 429,
    doc: 'Too many requests to this endpoint from this address in the current 15-minute window. Wait until the time in the retry-after header (metadata holds it in milliseconds since the epoch).',
  },
  API_BAD_BODY: {
    status: 400,
    doc: 'The request body is not valid: it must be JSON sent with a Content-Length (no chunked transfer encoding), at most 16 MiB, with every required field of the right type.',
  },
  API_BAD_QUERY: {
    status: 400,
    doc: 'The query string does not parse: a parameter has the wrong type (such as a `limit` that is not a whole number).',
  },
  API_BAD_QUERY_PARAMETER: {
    status: 400,
    doc: 'A query parameter has a value the endpoint does not accept.',
  },
  API_SERVICE_UNAVAILABLE: {
    status: 503,
    doc: 'The service is temporarily unavailable (overloaded or restarting) and did nothing with the request. Retry it later, with backoff.',
  },
  API_REQUEST_TIMEOUT: { status: 500, doc: 'The request handler did not finish within 50 seconds.' },
  ERROR: {
    status: 500,
    doc: "An internal error has occurred. The service answers this for unknown namespace, lobby, version, environment, upload or cursor ids, for duplicate file paths in a CDN site, for an invalid CDN site display name, for a version whose CDN site is unknown, another game's or not completely uploaded, for a version route with two or more headers (the version is then created without its routes and matchmaker), for a negative route priority, and when an upload is completed with parts missing (the emulator names them in metadata.missing_parts).",
  },
  VALIDATION_ERROR: {
    status: 400,
    doc: 'The request failed validation. metadata.errors lists the path of every problem, such as ["name-id", "not-unique"].',
  },
  MATCHMAKER_INVALID_VERSION_CONFIG: {
    status: 400,
    doc: "A number of the request is out of bounds: a negative content_length of a CDN site file, or a negative number in a version's matchmaker config (max players, ports, idle lobbies, captcha).",
  },
  CLOUD_INVALID_CONFIG: {
    status: 400,
    doc: 'The given config was invalid: a number is negative (the numbers are signed 32-bit integers).',
  },
  CDN_INVALID_DOMAIN: {
    status: 400,
    doc: 'The domain is not valid: 1 to 255 characters of a-z, 0-9, "." and "-", without protocol or path.',
  },
  CDN_TOO_MANY_DOMAINS: { status: 400, doc: 'The namespace already has the maximum of 10 domains.' },
  CDN_INVALID_AUTH_USER_PASSWORD: {
    status: 400,
    doc: 'The password of a CDN auth user must be a bcrypt hash (like $2b$10$...), never the password itself.',
  },
  CDN_TOO_MANY_AUTH_USERS: {
    status: 400,
    doc: 'The namespace already has the maximum of 32 CDN auth users; at the maximum, even replacing one is refused. Remove one first.',
  },
  CLOUD_TOO_MANY_PENDING_HOSTNAMES_FOR_GROUP: {
    status: 400,
    doc: 'The team already holds 10 custom domains pending verification. Point their DNS (CNAME) at their namespaces, or remove some, before adding another.',
  },
  CLOUD_HOSTNAME_TAKEN: {
    status: 400,
    doc: 'Another namespace (or another customer) holds this domain. A domain this namespace already has is answered 500 ERROR instead.',
  },
  UPLOAD_TOO_LARGE: {
    status: 400,
    doc: 'The upload is too large: the total size of a CDN site must stay under 1 GB (10^9 bytes), and a file may have at most 10,000 parts.',
  },
} satisfies Record<string, ErrorKind>

export type ErrorCode = keyof typeof ERROR_KINDS

const INTERNAL_ERROR_MESSAGE = 'An internal error has occurred.'

/** An error answer of the API: thrown by handlers, turned into the service's error body by the server. */
export class ApiError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly metadata: unknown
  readonly headers: Record<string, string>

  constructor(code: ErrorCode, message: string, metadata?: unknown, headers: Record<string, string> = {}) {
    super(message)
    this.code = code
    this.status = ERROR_KINDS[code].status
    this.metadata = metadata
    this.headers = headers
  }
}

/** What the real service answers for unknown ids: a 500, not a 404. */
export function internalError(metadata?: unknown): ApiError {
  return new ApiError('ERROR', INTERNAL_ERROR_MESSAGE, metadata)
}

export function badBody(reason: string): ApiError {
  return new ApiError('API_BAD_BODY', `Bad body: ${reason}`)
}

export function badQueryParameter(parameter: string, reason: string): ApiError {
  return new ApiError('API_BAD_QUERY_PARAMETER', `Bad value for parameter "${parameter}": ${reason}.`)
}

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_KINDS, code)
}

/** VALIDATION_ERROR naming every problem as a dotted path, with the paths in metadata. */
export function validationError(paths: readonly string[][]): ApiError {
  const message = `Validation error: ${paths.map((path) => path.join('.')).join(', ')}`
  return new ApiError('VALIDATION_ERROR', message, { errors: paths.map((path) => ({ path })) })
}
