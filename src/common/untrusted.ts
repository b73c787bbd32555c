// Text from outside (a file name of a fork's build, a service's answer, GitHub's, an error message) made
// inert where it is shown: a log line the runner reads for workflow commands, a terminal, a Markdown
// comment. The faces apply these to what they print; the core hands them text as it is. Each removes the
// run's secrets first (secrets.ts), before it escapes anything: an escaped secret is one no mask knows.

import { redact } from './secrets.ts'

/**
 * Characters that end a line, move the cursor, start an escape sequence or reorder what is shown:
 * C0 (tab, CR and LF included), DEL, C1 (NEL and CSI among them), the line and paragraph separators,
 * and the bidirectional marks and overrides.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

function escapeControl(char: string): string {
  const code = char.charCodeAt(0)
  return NAMED[char] ?? (code < 0x100 ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`)
}

const hex = (code: number, digits: number) => code.toString(16).padStart(digits, '0')

/**
 * The text as one inert line of a log, whatever it holds:
 * - control characters are shown as escapes: `\n`, `\r`, `\t`, `\x1b` (so an ANSI sequence shows as
 *   `\x1b[31m`, never colours or moves anything), `\x85`, `\u2028`, `\u202e`. No line can end inside it.
 * - the legacy workflow command `##[name]`, which the runner reads anywhere in a line, shows as
 *   `\x23#[name]`;
 * - `::` at its start (after any spaces), which the runner reads as a workflow command, shows as
 *   `\x3a:`.
 * A backslash is left as it is: the text is for reading, not to be decoded. Applying it twice
 * changes nothing more. Every secret of the run in it is `***` first (secrets.ts).
 */
export function visible(text: string): string {
  return redact(text)
    .replace(CONTROL, escapeControl)
    .replace(/##\[/g, '\\x23#[')
    .replace(/^(\s*):(?=:)/, '$1\\x3a')
}

/** Characters JSON.stringify leaves as they are that a terminal or a log viewer acts on. */
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

const redactStrings = (_key: string, value: unknown): unknown =>
  typeof value === 'string' ? redact(value) : value

/**
 * JSON.stringify, with the characters a terminal or the runner would act on written as \u escapes:
 * the same value once parsed, and no line of it a workflow command. (JSON.stringify escapes C0
 * itself; `##[` can only stand inside a string, where `\u0023#[` means the same.) Every secret of the
 * run in its strings is `***` before they are escaped.
 */
export function inertJson(value: unknown, space?: number): string {
  return redact(JSON.stringify(value, redactStrings, space))
    .replace(JSON_UNSAFE, (char) => `\\u${hex(char.charCodeAt(0), 4)}`)
    .replace(/##\[/g, '\\u0023#[')
}

/**
 * The text as an inline code span of Markdown, safe in a table cell: whatever it holds (backticks,
 * pipes, brackets, HTML, line breaks), it shows as code and links, mentions or images nothing.
 * Empty text gives an empty string.
 */
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
