import { gaveUpNote, type GaveUp, type RetryVerdict } from '../common/retry.ts'
import type { ServiceErrorBody } from './types.ts'

export { errorMessage } from '../common/format.ts'

/** What a failed call points at, in the API's terms (the service answers an unknown id with 500 ERROR). */
export type Concern =
  | { about: 'token'; code: string }
  | { about: 'unknown-id'; operation: string }
  | { about: 'base-url'; problem: 'unreached' | 'no-route' }
  | { about: 'base-url'; problem: 'foreign'; what: string }

/** What the layer above makes of a Concern: a hint naming the inputs to check. */
export interface Explanation {
  hint: string
  inputs: readonly string[]
}

export type Explain = (concern: Concern) => Explanation | undefined

type ServiceErrorInit = Partial<Explanation> & {
  operation: string
  status: number
  body: Partial<ServiceErrorBody>
  rayId?: string
  retryAfter?: string
  concern?: Concern
  gaveUp?: GaveUp
}

export class ServiceError extends Error {
  readonly status: number
  readonly code: string
  readonly serviceMessage: string
  readonly rayId: string | undefined
  readonly metadata: unknown
  readonly retryAfter: string | undefined
  readonly concern: Concern | undefined
  /** The inputs the message says to check: a re-run with the same ones most likely fails the same way. */
  readonly inputs: readonly string[]
  readonly gaveUp: GaveUp | undefined
  readonly #init: ServiceErrorInit

  constructor(init: ServiceErrorInit) {
    const { operation, status, body } = init
    const code = body.code ?? 'UNKNOWN'
    const serviceMessage = body.message ?? 'the service gave no message'
    const rayId = body.ray_id ?? init.rayId
    let message = `${operation} failed: ${status} ${code}: ${serviceMessage}`
    // Every path of a validation error, which often come in pairs, when the message does not name them.
    const paths = validationPaths(body.metadata).filter((path) => !serviceMessage.includes(path))
    if (paths.length) message += ` [${paths.join(', ')}]`
    if (rayId) message += ` (ray id ${rayId})`
    if (init.hint) message += `. ${init.hint}`
    if (body.documentation) message += `. See ${body.documentation}`
    message += gaveUpNote(init.gaveUp)
    super(message)
    this.name = 'ServiceError'
    this.status = status
    this.code = code
    this.serviceMessage = serviceMessage
    this.rayId = rayId
    this.metadata = body.metadata
    this.retryAfter = init.retryAfter
    this.concern = init.concern
    this.inputs = init.inputs ?? []
    this.gaveUp = init.gaveUp
    this.#init = init
  }

  afterRetries(gaveUp: GaveUp): ServiceError {
    return new ServiceError({ ...this.#init, gaveUp })
  }
}

/** The dotted paths in a VALIDATION_ERROR's metadata ({ errors: [{ path }] }). */
function validationPaths(metadata: unknown): string[] {
  const errors = (metadata as { errors?: unknown } | null | undefined)?.errors
  if (!Array.isArray(errors)) return []
  return errors.flatMap((entry: unknown) => {
    const path = (entry as { path?: unknown } | null)?.path
    return Array.isArray(path) && path.every((part) => typeof part === 'string') ? [path.join('.')] : []
  })
}

/** A problem found before anything was sent: a bad input, a file that cannot be read. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/**
 * An input the service's state refuses (an id not in the game, a domain another namespace holds): the
 * usage was right, so the CLI exits 1 (a failure), not 2 (bad usage).
 */
export class ServiceStateError extends UsageError {
  override name = 'ServiceStateError'
}

/** One problem of a validated value: the service's error path, a sentence, a title for the annotation. */
export interface ValidationProblem {
  path: string[]
  description: string
  /** Default: the path as words (`lobby-count too high`). */
  title?: string
}

export class ValidationFailedError extends Error {
  override name = 'ValidationFailedError'
  readonly problems: readonly ValidationProblem[]

  /** `foundBy`: who judged it so, when not this code (`The service`): `The service finds ... invalid`. */
  constructor(what: string, problems: readonly ValidationProblem[], options: { foundBy?: string } = {}) {
    const verdict = options.foundBy ? `${options.foundBy} finds ${what} invalid` : `${what} is invalid`
    super(`${verdict}: ${problems.map((p) => `${p.path.join('.')} (${p.description})`).join('; ')}`)
    this.problems = problems
  }
}

/** An answer that is not what its operation promises: the field named, or too large. */
export class UnexpectedAnswerError extends Error {
  override name = 'UnexpectedAnswerError'
}

type NetworkErrorOptions = ErrorOptions & Partial<Explanation> & { concern?: Concern; gaveUp?: GaveUp }

/** A request that got no complete answer; the cause keeps undici's error and its code. */
export class NetworkError extends Error {
  override name = 'NetworkError'
  readonly inputs: readonly string[]
  readonly gaveUp: GaveUp | undefined
  readonly concern: Concern | undefined
  readonly #reason: string
  readonly #options: NetworkErrorOptions

  constructor(reason: string, options: NetworkErrorOptions = {}) {
    super(reason + (options.hint ? `: ${options.hint}` : '') + gaveUpNote(options.gaveUp), options)
    this.inputs = options.inputs ?? []
    this.gaveUp = options.gaveUp
    this.concern = options.concern
    this.#reason = reason
    this.#options = options
  }

  afterRetries(gaveUp: GaveUp): NetworkError {
    return new NetworkError(this.#reason, { ...this.#options, gaveUp })
  }
}

/**
 * The wait a 429 (or 503) asks for: the `retry-after` header (seconds or an HTTP date) or the
 * service's `metadata` retry time (ms since the epoch), whichever is later.
 */
export function requestedDelay(error: unknown, now: number): number | undefined {
  const { retryAfter, metadata } = (error ?? {}) as { retryAfter?: unknown; metadata?: unknown }
  const header = typeof retryAfter === 'string' ? retryAfter.trim() : ''
  const candidates = [
    /^\d+(\.\d+)?$/.test(header) ? Number(header) * 1000 : Date.parse(header) - now,
    typeof metadata === 'number' ? metadata - now : Number.NaN,
  ].filter(Number.isFinite)
  return candidates.length ? Math.max(0, ...candidates) : undefined
}

/** Retried when `retryable`, after the wait the answer asks for when it asks. */
export function retryVerdict(retryable: boolean, error: unknown, now: number): RetryVerdict {
  if (!retryable) return false
  const afterMs = requestedDelay(error, now)
  return afterMs === undefined ? true : { afterMs }
}
