// The CLI's --help: the flags grouped as the README groups the inputs, then the CLI's own; lines wrapped
// to the terminal's width, examples continued with ` \` as a shell reads them.

import { TOKEN_ENV } from '../inputs/constants.ts'
import { API_URL_ENV, GAME_ID_ENV } from '../inputs/table.ts'
import type { Flag, FlagGroup } from './flags.ts'
import type { Command } from './command.ts'

const DEFAULT_WIDTH = 80
/** Below this, a terminal's width is not followed: nothing readable fits. */
const MIN_WIDTH = 40
/** A longer flag label has its help on the next line. */
const LABEL_MAX = 30

const GROUP_TITLES: Record<FlagGroup, string> = {
  required: 'Required flags:',
  common: 'Common flags:',
  advanced: 'Advanced flags:',
  output: 'Output flags:',
}

const EXIT_CODES = 'Exit codes: 0 success, 1 failure (of the service or what it holds), 2 bad usage.'

export function helpWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout): number {
  return stream.isTTY && stream.columns ? Math.max(stream.columns, MIN_WIDTH) : DEFAULT_WIDTH
}

/** Broken between words; a word longer than a line is cut. */
export function wrap(text: string, width: number, first = '', rest = first): string[] {
  const lines: string[] = []
  let line = first
  let empty = true
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const candidate = empty ? line + word : `${line} ${word}`
    if (candidate.length <= width) {
      line = candidate
      empty = false
      continue
    }
    if (!empty) lines.push(line)
    line = rest + word
    while (line.length > width) {
      lines.push(line.slice(0, width))
      line = rest + line.slice(width)
    }
    empty = false
  }
  lines.push(line)
  return lines
}

/** Quoted words and a flag with its value kept whole. */
export function wrapCommand(command: string, width: number, indent = '  '): string[] {
  const tokens = command.match(/'[^']*'|\S+/g) ?? []
  const words = tokens.reduce<string[]>((kept, token) => {
    const last = kept[kept.length - 1]
    if (last?.startsWith('--') && !last.includes(' ') && !token.startsWith('-'))
      kept[kept.length - 1] += ` ${token}`
    else kept.push(token)
    return kept
  }, [])
  const lines: string[] = []
  let line = indent
  for (const word of words) {
    const candidate = line.trim() ? `${line} ${word}` : line + word
    // Room for the ` \` that continues the line.
    if (candidate.length + 2 <= width || !line.trim()) line = candidate
    else {
      lines.push(`${line} \\`)
      line = `${indent}  ${word}`
    }
  }
  lines.push(line)
  return lines
}

function label(f: Flag): string {
  if (f.name === 'help') return '-h, --help'
  const name = f.negatable ? `[no-]${f.name}` : f.name
  return `--${name}${f.value ? ` <${f.value}>` : ''}${f.type === 'list' ? ' ...' : ''}`
}

export function commandHelp(command: Command, width = DEFAULT_WIDTH): string {
  const column = Math.min(Math.max(...command.flags.map((f) => label(f).length)), LABEL_MAX) + 4
  const groups = (Object.keys(GROUP_TITLES) as FlagGroup[]).flatMap((group) => {
    const flags = command.flags.filter((f) => f.group === group)
    const indent = ' '.repeat(column)
    const lines = flags.flatMap((f) => {
      const name = `  ${label(f)}`
      if (name.length + 2 > column) return [name, ...wrap(f.help, width, indent)]
      return wrap(f.help, width, name.padEnd(column), indent)
    })
    return flags.length ? ['', GROUP_TITLES[group], ...lines] : []
  })
  const fromEnv = command.flags.filter((f) => f.env).map((f) => `  ${f.env} (--${f.name})`)
  return [
    `Usage: gamehost ${command.name} [flags]`,
    '',
    ...wrap(command.description, width),
    ...groups,
    '',
    'Examples:',
    ...command.examples.flatMap((example) => wrapCommand(example, width)),
    '',
    'Read from the environment when their flag is not given:',
    ...fromEnv,
    '',
    ...wrap(EXIT_CODES, width),
  ].join('\n')
}

export function mainHelp(
  commands: ReadonlyArray<Pick<Command, 'name' | 'summary'>>,
  width = DEFAULT_WIDTH,
): string {
  const column = Math.max(...commands.map((c) => c.name.length)) + 4
  return [
    'Usage: gamehost <command> [flags]',
    '',
    ...wrap(
      'Deploy a game to the game hosting service and query it: the GitHub actions of gamehost, from any shell.',
      width,
    ),
    '',
    'Commands:',
    ...commands.flatMap((c) => wrap(c.summary, width, `  ${c.name}`.padEnd(column), ' '.repeat(column))),
    '',
    ...wrap(
      "Run 'gamehost <command> --help' for its flags, 'gamehost --version' for the version. " +
        `The token, api-url and game-id are read from the ${TOKEN_ENV}, ${API_URL_ENV} and ${GAME_ID_ENV} ` +
        'environment variables when their flag is not given.',
      width,
    ),
    ...wrap(EXIT_CODES, width),
  ].join('\n')
}
