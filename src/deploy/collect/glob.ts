// The `files` patterns, as @actions/glob reads them (minimatch with dot, nobrace, noext, nonegate,
// nocomment, nocase on Windows; implicit descendants; a later pattern overriding an earlier one), for
// the action and the CLI alike. Matched without regular expressions: a backtracking regex takes
// minutes for a star before each of a dozen letters against a long name; here a segment is matched in
// time proportional to the name's length times the pattern's.

import path from 'node:path'
import { usage } from '../../inputs/common.ts'

const NOCASE = process.platform === 'win32'
const GLOBSTAR = Symbol('**')
const STAR = Symbol('*')

/** `*`, or a test of one character. */
type Token = typeof STAR | ((char: string) => boolean)
/** A segment of a pattern: `**`, a literal name, or tokens to match one name with. */
type Segment = typeof GLOBSTAR | string | Token[]

interface Rule {
  exclude: boolean
  segments: Segment[]
  /** A pattern ending in `/`: it selects what is below the folders it matches, never a file itself. */
  directoryOnly: boolean
}

/** `\` separates on every platform, as on Windows: one selection on every runner (`[*]`: a `*`). */
export const sitePattern = (pattern: string) => pattern.replaceAll('\\', '/')

/** Checks patterns: relative, and never reaching above the root. */
export function checkPatterns(patterns: readonly string[]): void {
  for (const raw of patterns) {
    const pattern = raw.startsWith('!') ? raw.slice(1) : raw
    if (path.isAbsolute(pattern) || /^[a-zA-Z]:/.test(pattern))
      throw usage`{files}: '${raw}' is absolute; patterns are relative to {path}`
    if (pattern.split(/[\\/]/).includes('..'))
      throw usage`{files}: '${raw}' reaches outside {path}; patterns may not contain '..'`
  }
}

/**
 * Whether a path relative to the root (`/` separators) is selected by `patterns`: the last pattern
 * that matches it, or a folder above it, decides (`!` excludes).
 */
export function fileSelector(patterns: readonly string[]): (relative: string) => boolean {
  const rules = patterns.map(compileRule)
  const [only] = rules
  if (rules.length === 1 && !only!.exclude && only!.segments.length === 1 && only!.segments[0] === GLOBSTAR) {
    return () => true
  }
  return (relative) => {
    const parts = (NOCASE ? relative.toLowerCase() : relative).split('/')
    let chosen = false
    for (const rule of rules) {
      if (chosen === rule.exclude && matchesRule(rule, parts)) chosen = !rule.exclude
    }
    return chosen
  }
}

function compileRule(raw: string): Rule {
  let pattern = sitePattern(raw)
  const exclude = pattern.startsWith('!')
  if (exclude) pattern = pattern.slice(1)
  if (NOCASE) pattern = pattern.toLowerCase()
  const normal = path.posix.normalize(pattern)
  const body = normal.replace(/\/+$/, '')
  const segments: Segment[] = body === '.' || body === '' ? [GLOBSTAR] : body.split('/').map(compileSegment)
  const collapsed = segments.filter((s, i) => s !== GLOBSTAR || segments[i - 1] !== GLOBSTAR)
  return { exclude, segments: collapsed, directoryOnly: normal.endsWith('/') && body !== '.' }
}

function compileSegment(segment: string): Segment {
  if (segment === '**') return GLOBSTAR
  if (!/[*?[]/.test(segment)) return segment
  const tokens: Token[] = []
  for (let i = 0; i < segment.length; i++) {
    const char = segment[i]!
    const parsed = char === '[' ? parseClass(segment, i) : undefined
    if (char === '*') {
      if (tokens.at(-1) !== STAR) tokens.push(STAR)
    } else if (parsed) {
      tokens.push(parsed.test)
      i = parsed.end
    } else tokens.push(char === '?' ? () => true : (c) => c === char)
  }
  return tokens
}

const POSIX_CLASSES: Record<string, RegExp> = {
  alnum: /[\p{L}\p{Nl}\p{Nd}]/u,
  alpha: /[\p{L}\p{Nl}]/u,
  ascii: /[^\u0080-\uffff]/,
  blank: /[\p{Zs}\t]/u,
  cntrl: /\p{Cc}/u,
  digit: /\p{Nd}/u,
  graph: /[^\p{Z}\p{C}]/u,
  lower: /\p{Ll}/u,
  print: /[^\p{C}]/u,
  punct: /\p{P}/u,
  space: /[\p{Z}\t\r\n\v\f]/u,
  upper: /\p{Lu}/u,
  word: /[\p{L}\p{Nl}\p{Nd}\p{Pc}]/u,
  xdigit: /[A-Fa-f0-9]/,
}

/** A `[...]` class at `start`: its test of one character and where it ends; undefined when unclosed. */
function parseClass(
  segment: string,
  start: number,
): { test: (char: string) => boolean; end: number } | undefined {
  let i = start + 1
  const negated = segment[i] === '!' || segment[i] === '^'
  if (negated) i++
  const tests: Array<(char: string) => boolean> = []
  for (let first = true; i < segment.length; first = false) {
    const char = segment[i]!
    if (char === ']' && !first) {
      return { test: (c) => tests.some((t) => t(c)) !== negated, end: i }
    }
    const posix = char === '[' && /^\[:([a-z]+):\]/.exec(segment.slice(i))
    if (posix && POSIX_CLASSES[posix[1]!]) {
      const re = POSIX_CLASSES[posix[1]!]!
      tests.push((c) => re.test(c))
      i += posix[0].length
    } else if (segment[i + 1] === '-' && segment[i + 2] !== undefined && segment[i + 2] !== ']') {
      const high = segment[i + 2]!
      tests.push((c) => c >= char && c <= high)
      i += 3
    } else {
      tests.push((c) => c === char)
      i++
    }
  }
  return undefined
}

/**
 * Whether the rule matches the path (`parts`, its segments) or, as implicit descendants, a folder
 * above it: the states are the pattern's segments reached so far, each path segment taken once.
 */
function matchesRule(rule: Rule, parts: readonly string[]): boolean {
  const { segments } = rule
  const end = segments.length
  let states = closure(segments, [0])
  for (const part of parts) {
    if (states.includes(end)) return true
    const next: number[] = []
    for (const i of states) {
      if (i === end) continue
      const segment = segments[i]!
      if (segment === GLOBSTAR) next.push(i)
      else if (typeof segment === 'string' ? segment === part : matchesName(segment, part)) next.push(i + 1)
    }
    if (!next.length) return false
    states = closure(segments, next)
  }
  return !rule.directoryOnly && states.includes(end)
}

/** The states with those a `**` may reach by matching no segment, each once. */
function closure(segments: readonly Segment[], states: number[]): number[] {
  const all = new Set<number>()
  for (let i of states) {
    all.add(i)
    while (segments[i] === GLOBSTAR) all.add(++i)
  }
  return [...all]
}

/**
 * Whether one name matches a segment's tokens: a `*` remembered, the name retried one character
 * further from the last `*` on a mismatch, so each character meets each token at most once per `*`.
 */
function matchesName(tokens: readonly Token[], name: string): boolean {
  let t = 0
  let i = 0
  let starToken = -1
  let starAt = 0
  while (i < name.length) {
    const token = tokens[t]
    if (token === STAR) {
      starToken = t++
      starAt = i
    } else if (token?.(name[i]!)) {
      t++
      i++
    } else if (starToken < 0) return false
    else {
      t = starToken + 1
      i = ++starAt
    }
  }
  while (tokens[t] === STAR) t++
  return t === tokens.length
}
