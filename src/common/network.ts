// The one classifier of network failures, read from the `code`s of the error and its causes (undici's
// sit in the cause).

/** The code of a request aborted past its overall deadline (the API client's DeadlineError). */
export const DEADLINE_EXCEEDED = 'GAMEHOST_DEADLINE_EXCEEDED'

/**
 * `refused`: the connection was not made (refused, unreachable, connect time-out): nothing was sent.
 * `dns`: the name does not resolve; `tls`: the handshake failed or the certificate was refused: a
 * later attempt fails the same way. `dns-again`: the resolver could not answer for now. `lost`: the
 * connection was lost after the request may have been sent. `descriptors`: EMFILE, ENFILE.
 */
export type NetworkFailureKind = 'refused' | 'dns' | 'dns-again' | 'tls' | 'lost' | 'descriptors'

const KINDS: Record<string, NetworkFailureKind> = {
  ECONNREFUSED: 'refused',
  UND_ERR_CONNECT_TIMEOUT: 'refused',
  ENETUNREACH: 'refused',
  EHOSTUNREACH: 'refused',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns-again',
  [DEADLINE_EXCEEDED]: 'lost',
  ECONNRESET: 'lost',
  EPIPE: 'lost',
  ETIMEDOUT: 'lost',
  UND_ERR_SOCKET: 'lost',
  UND_ERR_CLOSED: 'lost',
  UND_ERR_HEADERS_TIMEOUT: 'lost',
  UND_ERR_BODY_TIMEOUT: 'lost',
  UND_ERR_REQ_CONTENT_LENGTH_MISMATCH: 'lost',
  UND_ERR_ABORTED: 'lost',
  EMFILE: 'descriptors',
  ENFILE: 'descriptors',
}

const TLS_CODE = /^(ERR_SSL|ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/

export function errorCodes(error: unknown): string[] {
  const codes: string[] = []
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as Error).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string') codes.push(code)
  }
  return codes
}

function kindOf(code: string): NetworkFailureKind | undefined {
  return Object.hasOwn(KINDS, code) ? KINDS[code] : TLS_CODE.test(code) ? 'tls' : undefined
}

/** The outermost known code's failure. */
export function networkFailure(error: unknown): { kind: NetworkFailureKind; code: string } | undefined {
  for (const code of errorCodes(error)) {
    const kind = kindOf(code)
    if (kind) return { kind, code }
  }
  return undefined
}

function isFailureOf(error: unknown, ...kinds: NetworkFailureKind[]): boolean {
  return errorCodes(error).some((code) => kinds.includes(kindOf(code)!))
}

/** A connection that failed before the request was sent: safe to retry any call. */
export const isConnectFailure = (error: unknown): boolean => isFailureOf(error, 'refused', 'dns-again')

/** A failure a retry may fix: not made, or lost (a name that does not resolve or a refused certificate is not). */
export const isNetworkFailure = (error: unknown): boolean =>
  isFailureOf(error, 'refused', 'dns-again', 'lost')

/** The host cannot be reached at all: refused, unreachable, not resolved, no TLS handshake. */
export const isUnreachable = (error: unknown): boolean =>
  isFailureOf(error, 'refused', 'dns-again', 'dns', 'tls')

export const isOutOfDescriptors = (error: unknown): boolean => isFailureOf(error, 'descriptors')
