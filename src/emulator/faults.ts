// Fault injection: what a deploy job meets on the real internet (a store that asks to slow down,
// connections cut mid-body, requests that hang, bytes corrupted in transit, an API that is briefly
// unavailable or rate limited). Every decision comes from one seeded PRNG, drawn in request-arrival
// order, so the same seed and the same order of requests inject the same faults.

import type { IncomingMessage, ServerResponse } from 'node:http'

export type ScriptedAnswer = '429' | '503' | 'reset'

export interface FaultOptions {
  /** PRNG seed (an integer, used modulo 2^32). Default 1. */
  seed?: number
  // Presigned store PUTs, each decided when it arrives, after the store's own refusals:
  /** Fraction answered 503 with S3's <Code>SlowDown</Code> (body drained, nothing stored). */
  putErrorRate?: number
  /** Fraction whose connection is destroyed after about half of the body arrived (nothing stored). */
  putResetRate?: number
  /** Fraction whose body is never read and that are never answered, until the client closes. */
  putStallRate?: number
  /** Additionally, the first N PUTs stall. */
  putStallCount?: number
  /** Fraction stored with one byte flipped, answered with the ETag of the corrupted bytes. */
  putWrongEtagRate?: number
  // API calls, after route match and auth, before anything is done (a refused call changes nothing):
  /** Fraction answered 503 API_SERVICE_UNAVAILABLE. */
  apiErrorRate?: number
  /**
   * Answers for the first calls of a route, keyed 'METHOD /pattern' exactly as the route patterns,
   * e.g. 'POST /cloud/games/:game_id/namespaces'. Each call of the route consumes one entry; once the
   * list is used up, calls go through normally. '429': API_RATE_LIMIT with retry-after 1 s ahead;
   * '503': as apiErrorRate; 'reset': the connection is destroyed before the body is read.
   */
  script?: Record<string, ScriptedAnswer[]>
  /**
   * Publishes that never reach the namespace's host, counted from 1 in arrival order among the
   * publishes that change a namespace's version (`PUT .../namespaces/{id}/version`): the call answers
   * `{}` and the namespace reads as on the new version, but its host keeps serving what it served,
   * until a later publish or a domain change rebuilds its CDN config. For a client's rollback path.
   */
  lostPublishes?: number[]
}

/** How many faults were injected so far. */
export interface FaultCounters {
  putErrors: number
  putResets: number
  putStalls: number
  putWrongEtags: number
  apiErrors: number
  api429s: number
  apiResets: number
  publishesLost: number
}

export type FaultKind =
  | 'put-error'
  | 'put-reset'
  | 'put-stall'
  | 'put-wrong-etag'
  | 'api-error'
  | 'api-429'
  | 'api-reset'
  | 'publish-lost'

export type PutFault = 'error' | 'reset' | 'stall' | 'wrong-etag'
export type ApiFault = ScriptedAnswer

export interface ResolvedFaults {
  seed: number
  putErrorRate: number
  putResetRate: number
  putStallRate: number
  putStallCount: number
  putWrongEtagRate: number
  apiErrorRate: number
  script: ReadonlyMap<string, readonly ScriptedAnswer[]>
  lostPublishes: ReadonlySet<number>
}

const DEFAULT_FAULT_SEED = 1

const RATES = ['putErrorRate', 'putResetRate', 'putStallRate', 'putWrongEtagRate', 'apiErrorRate'] as const
const COUNTS = ['putStallCount'] as const
const FAULT_KEYS: ReadonlySet<string> = new Set(['seed', 'script', 'lostPublishes', ...RATES, ...COUNTS])
const SCRIPTED_ANSWERS: ReadonlySet<string> = new Set(['429', '503', 'reset'])

/**
 * Checks fault options (typed or straight from JSON) and fills in the defaults; undefined stays
 * undefined (no faults). Throws an Error naming the offending key.
 */
export function resolveFaults(options: unknown): ResolvedFaults | undefined {
  if (options === undefined) return undefined
  if (!isPlainObject(options)) throw new Error('emulator option faults must be an object')
  for (const key of Object.keys(options)) {
    if (!FAULT_KEYS.has(key)) {
      throw new Error(
        `emulator option faults has an unknown key ${JSON.stringify(key)} (known: ${[...FAULT_KEYS].join(', ')})`,
      )
    }
  }
  const seed = options.seed ?? DEFAULT_FAULT_SEED
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed)) {
    throw new Error(`emulator option faults.seed must be an integer, got ${JSON.stringify(seed)}`)
  }
  const number = (key: (typeof RATES)[number] | (typeof COUNTS)[number]): number => {
    const value = options[key] ?? 0
    const isRate = (RATES as readonly string[]).includes(key)
    const valid = isRate
      ? typeof value === 'number' && value >= 0 && value <= 1
      : typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
    if (!valid) {
      const expected = isRate ? 'a number from 0 to 1' : 'a non-negative integer'
      throw new Error(`emulator option faults.${key} must be ${expected}, got ${JSON.stringify(value)}`)
    }
    return value as number
  }
  return {
    seed,
    putErrorRate: number('putErrorRate'),
    putResetRate: number('putResetRate'),
    putStallRate: number('putStallRate'),
    putStallCount: number('putStallCount'),
    putWrongEtagRate: number('putWrongEtagRate'),
    apiErrorRate: number('apiErrorRate'),
    script: resolveScript(options.script),
    lostPublishes: resolveLostPublishes(options.lostPublishes),
  }
}

function resolveLostPublishes(value: unknown): Set<number> {
  if (value === undefined) return new Set()
  if (
    !Array.isArray(value) ||
    !value.every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 1)
  ) {
    throw new Error(
      `emulator option faults.lostPublishes must be an array of publish numbers from 1, got ${JSON.stringify(value)}`,
    )
  }
  return new Set(value as number[])
}

function resolveScript(script: unknown): Map<string, ScriptedAnswer[]> {
  const resolved = new Map<string, ScriptedAnswer[]>()
  if (script === undefined) return resolved
  if (!isPlainObject(script)) {
    throw new Error('emulator option faults.script must be an object of "METHOD /pattern" to answers')
  }
  for (const [key, answers] of Object.entries(script)) {
    const name = `faults.script[${JSON.stringify(key)}]`
    if (!Array.isArray(answers) || !answers.every((answer) => SCRIPTED_ANSWERS.has(answer as string))) {
      throw new Error(
        `emulator option ${name} must be an array of "429", "503" or "reset", got ${JSON.stringify(answers)}`,
      )
    }
    resolved.set(key, [...(answers as ScriptedAnswer[])])
  }
  return resolved
}

/**
 * Checks that each route `script` names is one of `routes` ('METHOD /pattern', the keys of the API's
 * routes: routeKeys in routes/index.ts, which hands them in so that this module needs no route).
 */
export function checkScriptRoutes(faults: ResolvedFaults | undefined, routes: readonly string[]): void {
  for (const key of faults?.script.keys() ?? []) {
    if (!routes.includes(key)) {
      throw new Error(
        `emulator option faults.script[${JSON.stringify(key)}]: no such route; the routes are: ${routes.join(', ')}`,
      )
    }
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** mulberry32: a small, fast 32-bit PRNG; answers numbers in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * Decides the faults of one emulator. With faults configured, every store PUT that passed the
 * store's checks draws exactly 4 numbers (stall, reset, error, wrong ETag, in that order; the first
 * whose draw is below its rate wins) and every API call that passed route match and auth draws
 * exactly 1 (below apiErrorRate: 503), scripted or not, so one fault's rate never shifts the
 * decisions of the others. Without faults nothing is drawn and nothing is injected.
 */
export class FaultInjector {
  private readonly faults: ResolvedFaults | undefined
  private readonly random: () => number
  private readonly counts: FaultCounters = {
    putErrors: 0,
    putResets: 0,
    putStalls: 0,
    putWrongEtags: 0,
    apiErrors: 0,
    api429s: 0,
    apiResets: 0,
    publishesLost: 0,
  }
  private publishes = 0
  private stallsLeft: number
  private readonly script: Map<string, ScriptedAnswer[]>
  private readonly kinds = new WeakMap<IncomingMessage, FaultKind>()
  private readonly stalled = new Set<ServerResponse>()

  constructor(faults: ResolvedFaults | undefined) {
    this.faults = faults
    this.random = mulberry32(faults?.seed ?? DEFAULT_FAULT_SEED)
    this.stallsLeft = faults?.putStallCount ?? 0
    this.script = new Map([...(faults?.script ?? [])].map(([key, answers]) => [key, [...answers]]))
  }

  /** A copy of the counters. */
  counters(): FaultCounters {
    return { ...this.counts }
  }

  /** The fault injected into a request, if any. */
  kindOf(req: IncomingMessage): FaultKind | undefined {
    return this.kinds.get(req)
  }

  /** Decides the fault of a store PUT of `contentLength` bytes that the store would accept. */
  decidePut(req: IncomingMessage, contentLength: number): PutFault | undefined {
    const faults = this.faults
    if (!faults) return undefined
    const [stall, reset, error, wrongEtag] = [this.random(), this.random(), this.random(), this.random()]
    let fault: PutFault | undefined
    if (this.stallsLeft > 0) {
      this.stallsLeft--
      fault = 'stall'
    } else if (stall < faults.putStallRate) fault = 'stall'
    else if (reset < faults.putResetRate) fault = 'reset'
    else if (error < faults.putErrorRate) fault = 'error'
    // An empty part has no byte to corrupt.
    else if (wrongEtag < faults.putWrongEtagRate && contentLength > 0) fault = 'wrong-etag'
    if (fault === 'stall') this.note(req, 'put-stall', 'putStalls')
    else if (fault === 'reset') this.note(req, 'put-reset', 'putResets')
    else if (fault === 'error') this.note(req, 'put-error', 'putErrors')
    else if (fault === 'wrong-etag') this.note(req, 'put-wrong-etag', 'putWrongEtags')
    return fault
  }

  /** Decides the fault of an API call of the route 'METHOD /pattern'. */
  decideApi(req: IncomingMessage, routeKey: string): ApiFault | undefined {
    const faults = this.faults
    if (!faults) return undefined
    const draw = this.random()
    const fault = this.script.get(routeKey)?.shift() ?? (draw < faults.apiErrorRate ? '503' : undefined)
    if (fault === '503') this.note(req, 'api-error', 'apiErrors')
    else if (fault === '429') this.note(req, 'api-429', 'api429s')
    else if (fault === 'reset') this.note(req, 'api-reset', 'apiResets')
    return fault
  }

  /**
   * Whether a publish that changes a namespace's version never reaches its host (lostPublishes). Draws
   * nothing, so it shifts no other decision.
   */
  decidePublish(req: IncomingMessage): boolean {
    if (!this.faults) return false
    this.publishes++
    if (!this.faults.lostPublishes.has(this.publishes)) return false
    this.note(req, 'publish-lost', 'publishesLost')
    return true
  }

  /** Keeps a stalled response until its connection closes, so that close() can cut it at once. */
  holdStalled(res: ServerResponse): Promise<void> {
    if (res.destroyed || res.socket === null || res.socket.destroyed) return Promise.resolve()
    this.stalled.add(res)
    return new Promise((resolve) => {
      res.once('close', () => {
        this.stalled.delete(res)
        resolve()
      })
    })
  }

  /** Destroys the connections of every stalled request. */
  cutStalled(): void {
    for (const res of this.stalled) res.destroy()
  }

  private note(req: IncomingMessage, kind: FaultKind, counter: keyof FaultCounters): void {
    this.kinds.set(req, kind)
    this.counts[counter]++
  }
}
