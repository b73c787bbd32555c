// Game versions as the service sends and takes them (read from its source): a version config's wire
// shape, the CDN's limits, and route globs as the service parses and the CDN matches them.

export interface CdnHeader {
  name: string
  value: string
}

interface CdnMiddleware {
  kind: { custom_headers?: { headers: CdnHeader[] } | null }
}

export interface CdnRoute {
  glob: string
  priority: number
  middlewares: CdnMiddleware[]
}

export interface CdnVersionConfig {
  build_command?: string | null
  build_output?: string | null
  build_env?: Record<string, string> | null
  site_id?: string | null
  routes?: CdnRoute[] | null
}

export interface VersionConfig {
  engine?: unknown
  cdn?: CdnVersionConfig | null
  /** Read by the client only for the two forms of its game modes (the emulator types the rest). */
  matchmaker?: { game_modes?: unknown; lobby_groups?: unknown; [field: string]: unknown } | null
  kv?: unknown
  identity?: unknown
}

export const CDN_HEADER_NAME_MAX_BYTES = 512
export const CDN_HEADER_VALUE_MAX_BYTES = 1024
export const CDN_PRIORITY_MAX = 100
/** The CDN reads only this many routes of a version, middlewares of a route and headers of a middleware. */
export const CDN_SERVED_MAX = 10

type GlobToken = { char: string } | 'any' | 'recursive'

/**
 * The tokens of a route glob, or undefined when the service's parser refuses it (a segment that holds
 * `**` and anything else). A character after `\` never splits; consecutive `**` segments count once.
 */
export function parseGlob(glob: string): GlobToken[] | undefined {
  const segments: string[] = []
  let current = ''
  let escaped = false
  for (const char of glob) {
    if (!escaped && char === '/') {
      segments.push(current)
      current = ''
      continue
    }
    escaped = !escaped && char === '\\'
    current += char
  }
  segments.push(current)

  const tokens: GlobToken[] = []
  let previousWasDoubleStar = false
  for (const [index, segment] of segments.entries()) {
    if (segment === '**') {
      if (!previousWasDoubleStar) tokens.push('recursive')
      previousWasDoubleStar = true
      continue
    }
    previousWasDoubleStar = false
    let previousWasStar = false
    for (const char of segment) {
      if (char === '*') {
        if (previousWasStar) return undefined
        tokens.push('any')
      } else {
        tokens.push({ char })
      }
      previousWasStar = char === '*'
    }
    if (index !== segments.length - 1) tokens.push({ char: '/' })
  }
  return tokens
}

/** A glob as the service answers it when a version is read: a `**` segment comes back followed by `/`. */
export function globToString(tokens: readonly GlobToken[]): string {
  return tokens.map((token) => (token === 'any' ? '*' : token === 'recursive' ? '**/' : token.char)).join('')
}

/** The glob itself when it does not parse. */
export function normalizeGlob(glob: string): string {
  const tokens = parseGlob(glob)
  return tokens ? globToString(tokens) : glob
}

/**
 * True when the CDN applies a route of this glob to `path` (from its leading `/`): `*` is one or more
 * characters but `/`, `**` any. Stepped once per character of the path: a regular expression
 * backtracks for minutes on a glob with a dozen stars against a long path.
 */
export function globMatches(glob: string, path: string): boolean {
  const tokens = parseGlob(glob)
  if (tokens === undefined || tokens.length === 0) return false
  const steps: GlobStep[] = [{ char: '/' }, ...globSteps(tokens)]
  const end = steps.length
  const reach = (states: Set<number>, i: number) => {
    states.add(i)
    while (i < end && repeats(steps[i]!)) states.add(++i)
  }
  let states = new Set<number>()
  reach(states, 0)
  for (const char of path) {
    const next = new Set<number>()
    for (const i of states) {
      const step = steps[i]
      if (step === undefined) continue
      if (stepsMeet(step, { char })) reach(next, repeats(step) ? i : i + 1)
    }
    if (next.size === 0) return false
    states = next
  }
  return states.has(end)
}

/** What one position of a glob takes. */
type GlobStep = { char: string } | 'segment-char' | 'segment-chars' | 'any-chars'

/** `*` is one character of a segment and then any number more. */
function globSteps(tokens: readonly GlobToken[]): GlobStep[] {
  return tokens.flatMap((token): GlobStep[] =>
    token === 'any' ? ['segment-char', 'segment-chars'] : token === 'recursive' ? ['any-chars'] : [token],
  )
}

const repeats = (step: GlobStep) => step === 'segment-chars' || step === 'any-chars'

function stepsMeet(a: GlobStep, b: GlobStep): boolean {
  if (typeof a === 'object' && typeof b === 'object') return a.char === b.char
  if (typeof a === 'object') return b === 'any-chars' || a.char !== '/'
  if (typeof b === 'object') return a === 'any-chars' || b.char !== '/'
  return true
}

/** Where two routes overlap, only the one of higher priority adds its header. */
export function globsOverlap(a: string, b: string): boolean {
  const tokensA = parseGlob(a)
  const tokensB = parseGlob(b)
  if (!tokensA?.length || !tokensB?.length) return false
  const stepsA = globSteps(tokensA)
  const stepsB = globSteps(tokensB)
  // A walk over both matchers at once: a state is a position in each; a repeating step may be left
  // without taking a character, or take one and stay.
  const seen = new Set<string>()
  const pending: Array<[number, number]> = [[0, 0]]
  while (pending.length) {
    const [i, j] = pending.pop()!
    const key = `${i},${j}`
    if (seen.has(key)) continue
    seen.add(key)
    if (i === stepsA.length && j === stepsB.length) return true
    const stepA = stepsA[i]
    const stepB = stepsB[j]
    if (stepA && repeats(stepA)) pending.push([i + 1, j])
    if (stepB && repeats(stepB)) pending.push([i, j + 1])
    if (stepA && stepB && stepsMeet(stepA, stepB)) {
      const nextI = repeats(stepA) ? i : i + 1
      const nextJ = repeats(stepB) ? j : j + 1
      if (nextI !== i || nextJ !== j) pending.push([nextI, nextJ])
    }
  }
  return false
}

/** The paths the CDN serves through its page layer. */
export const PAGES = '/, paths ending in /, and *.html'

/** A site's file is one when `/` and its path is. */
export function isPage(urlPath: string): boolean {
  return urlPath.endsWith('/') || urlPath.endsWith('.html')
}

export function globMatchesPages(glob: string): boolean {
  return globMatches(glob, '/') || globsOverlap(glob, '**/*.html') || globsOverlap(glob, '**/*/')
}

/** True when every path the glob matches is a page, whatever its wildcards take. */
export function globMatchesOnlyPages(glob: string): boolean {
  const tokens = parseGlob(glob)
  if (!tokens?.length) return false
  let tail = ''
  for (let i = tokens.length - 1; i >= 0; i--) {
    const token = tokens[i]!
    if (typeof token !== 'object') break
    tail = token.char + tail
  }
  return isPage(tail)
}

/**
 * Orders globs from the most specific: one without a `**` segment before one with, then the one with
 * more literal characters, then the one with fewer `*`. Negative when `a` is the more specific.
 */
export function compareGlobSpecificity(a: string, b: string): number {
  const measure = (glob: string) => {
    const tokens = parseGlob(glob) ?? []
    return {
      recursive: tokens.filter((t) => t === 'recursive').length,
      literal: tokens.filter((t) => typeof t === 'object').length,
      any: tokens.filter((t) => t === 'any').length,
    }
  }
  const ma = measure(a)
  const mb = measure(b)
  return ma.recursive - mb.recursive || mb.literal - ma.literal || ma.any - mb.any
}
