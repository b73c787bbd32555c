import type { ServiceErrorBody } from './types.ts'

/**
 * Why a retried call stopped, when its retries ended before a success: the retries were spent, the
 * next would have started past the time bound, or the service asked for a wait longer than allowed.
 */
export type GaveUp =
  | { kind: 'retries-spent'; attempts: number }
  | { kind: 'out-of-time'; attempts: number; elapsedMs: number; maxElapsedMs: number }
  | { kind: 'wait-too-long'; askedMs: number; until: number; maxRetryAfterMs: number }

/** How a retried call stopped, in words, after the message of its last error: ` (gave up after 3 attempts)`. */
export function gaveUpNote(gaveUp: GaveUp | undefined): string {
  switch (gaveUp?.kind) {
    case undefined:
      return ''
    case 'retries-spent':
      return ` (gave up after ${gaveUp.attempts} attempts)`
    case 'out-of-time':
      return (
        ` (gave up after ${gaveUp.attempts} attempts in ${Math.round(gaveUp.elapsedMs / 1000)} s: ` +
        `retries stop ${Math.round(gaveUp.maxElapsedMs / 1000)} s after the first attempt)`
      )
    case 'wait-too-long':
      return (
        ` (the service asks to wait ${Math.ceil(gaveUp.askedMs / 1000)} s, until ${new Date(gaveUp.until).toISOString()}: ` +
        `longer than the ${Math.round(gaveUp.maxRetryAfterMs / 1000)} s allowed; not retried)`
      )
  }
}

type ServiceErrorInit = {
  operation: string
  status: number
  body: Partial<ServiceErrorBody>
  rayId?: string
  retryAfter?: string
  hint?: string
  inputs?: readonly string[]
  /** How the retries of the call ended, when it was retried and they stopped: said last in the message. */
  gaveUp?: GaveUp
}

/** What the service said when it refused a call: status, code, message, ray id and documentation. */
export class ServiceError extends Error {
  readonly operation: string
  readonly status: number
  readonly code: string
  readonly serviceMessage: string
  readonly rayId: string | undefined
  readonly documentation: string | undefined
  readonly metadata: unknown
  readonly retryAfter: string | undefined
  /**
   * The inputs the message says to check (`token`, `game-id`, `namespace-id`, ...): the refusal is
   * about them, so a re-run with the same inputs most likely fails the same way. Empty when none.
   */
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
    this.operation = operation
    this.status = status
    this.code = code
    this.serviceMessage = serviceMessage
    this.rayId = rayId
    this.documentation = body.documentation
    this.metadata = body.metadata
    this.retryAfter = init.retryAfter
    this.inputs = init.inputs ?? []
    this.gaveUp = init.gaveUp
    this.#init = init
  }

  /** The same refusal, saying how the call's retries ended. */
  afterRetries(gaveUp: GaveUp): ServiceError {
    return new ServiceError({ ...this.#init, gaveUp })
  }
}

/** The dotted paths in a VALIDATION_ERROR's metadata ({ errors: [{ path }] }); empty for any other. */
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
 * An input the service's state refuses, found by asking it: an id not in the game, no version to roll
 * back to, a domain another namespace holds. The input to fix is named as in a UsageError, but the
 * usage was right: the CLI exits 1 (a failure), not 2 (bad usage).
 */
export class ServiceStateError extends UsageError {
  override name = 'ServiceStateError'
}

/** One problem of a validated value: the service's error path, a sentence, and a title for the annotation. */
export interface ValidationProblem {
  path: string[]
  description: string
  /** Default: the path as words (`lobby-count too high`). */
  title?: string
}

/** The matchmaker config (or another validated value) that the service's rules reject. */
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

/** The message of any thrown value, for logs. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ''
    return error.message + (cause && !error.message.includes(cause.slice(2)) ? cause : '')
  }
  return String(error)
}

/** An answer of the service that is not what its operation promises: the field named, or too large. */
export class UnexpectedAnswerError extends Error {
  override name = 'UnexpectedAnswerError'
}

/**
 * A request that got no complete answer, named by operation and host ("no answer within 30 s"
 * rather than undici's "Headers Timeout Error"); the cause keeps undici's error and its code.
 */
export class NetworkError extends Error {
  override name = 'NetworkError'
  /** The inputs the message says to check: api-url, when nothing at it ever answered. Empty when none. */
  readonly inputs: readonly string[]
  /** How the call's retries ended, when it was retried and they stopped: said last in the message. */
  readonly gaveUp: GaveUp | undefined
  readonly #reason: string

  constructor(reason: string, options?: ErrorOptions & { inputs?: readonly string[]; gaveUp?: GaveUp }) {
    super(reason + gaveUpNote(options?.gaveUp), options)
    this.inputs = options?.inputs ?? []
    this.gaveUp = options?.gaveUp
    this.#reason = reason
  }

  /** The same failure, saying how the call's retries ended. */
  afterRetries(gaveUp: GaveUp): NetworkError {
    return new NetworkError(this.#reason, { cause: this.cause, inputs: this.inputs, gaveUp })
  }
}

/**
 * The error a retried call fails with once its retries stopped: `error` made again with `gaveUp` in
 * its message (the service's and the network's errors keep their class); the message of an error is
 * never changed once it was thrown. Any other error becomes the cause of a new one.
 */
export function afterRetries(error: unknown, gaveUp: GaveUp): unknown {
  if (error instanceof ServiceError || error instanceof NetworkError) return error.afterRetries(gaveUp)
  if (error instanceof Error) return new Error(error.message + gaveUpNote(gaveUp), { cause: error })
  return error
}
