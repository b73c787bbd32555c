// Text from outside (a fork's file name, a service's answer, an error message) made inert where the
// faces show it: a log line the runner reads for workflow commands, a terminal, a Markdown comment.
// Each removes the run's secrets first, before it escapes anything: an escaped secret is one no mask knows.

import { redact } from './secrets.ts'

/** C0, DEL, C1, the line and paragraph separators, and the bidirectional marks and overrides. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

function escapeControl(char: string): string {
  const code = char.charCodeAt(0)
  return NAMED[char] ?? (code < 0x100 ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`)
}

const hex = (code: number, digits: number) => code.toString(16).padStart(digits, '0')

/**
 * The text as one inert line of a log: control characters as escapes (`\n`, `\x1b`, `\u202e`), the
 * legacy workflow command `##[name]` (read anywhere in a line) as `\x23#[name]`, and `::` at its
 * start as `\x3a:`. A backslash is left as it is: the text is for reading, not to be decoded.
 */
export function visible(text: string): string {
  return redact(text)
    .replace(CONTROL, escapeControl)
    .replace(/##\[/g, '\\x23#[')
    .replace(/^(\s*):(?=:)/, '$1\\x3a')
}

/** What JSON.stringify leaves as it is that a terminal or a log viewer acts on. */
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

const redactStrings = (_key: string, value: unknown): unknown =>
  typeof value === 'string' ? redact(value) : value

/**
 * JSON.stringify, with what a terminal or the runner would act on as \u escapes: the same value once
 * parsed, no line of it a workflow command (`##[` can only stand in a string, where `\u0023#[` is the same).
 */
export function inertJson(value: unknown, space?: number): string {
  return redact(JSON.stringify(value, redactStrings, space))
    .replace(JSON_UNSAFE, (char) => `\\u${hex(char.charCodeAt(0), 4)}`)
    .replace(/##\[/g, '\\u0023#[')
}

/** The text as an inline code span of Markdown, safe in a table cell: it links, mentions or shows nothing. */
export function markdownCode(text: string): string {
  // In a table row a pipe ends the cell even inside code: GFM reads `\|` as a pipe there.
  const value = visible(text).replace(/\|/g, '\\|')
  if (!value) return ''
  const longest = Math.max(0, ...(value.match(/`+/g) ?? []).map((run) => run.length))
  const fence = '`'.repeat(longest + 1)
  // A code span that begins or ends with a backtick needs a space between it and the fence (one
  // space each side is removed again); so does one that begins and ends with a space.
  const pad = /^[` ]|[` ]$/.test(value) ? ' ' : ''
  return `${fence}${pad}${value}${pad}${fence}`
}

/**
 * The text as plain Markdown text, safe in a table cell and a heading: every ASCII punctuation
 * character backslash-escaped, so it makes no link, image, autolink, HTML, emphasis, table cell or
 * math; `@` and `#` followed by a word joiner (U+2060), so no mention or issue reference either.
 */
export function markdownText(text: string): string {
  return visible(text).replace(/[!-/:-@[-`{-~]/g, (char) =>
    char === '@' || char === '#' ? `\\${char}\u2060` : `\\${char}`,
  )
}
