// What a run reports, as data: the action renders it into the job summary (HTML, see action.ts), the
// CLI into aligned text lines (below). One description of each report serves both.

import { visible } from './untrusted.ts'

/**
 * An output value. The action sets it as its output (strings as they are, anything else as JSON;
 * null as empty); the CLI's --json prints it as it is, under the same name.
 */
export type OutputValue = string | number | boolean | null | object

/** A piece of a table cell: plain text, or code (an id, a digest, a path). */
export type Inline = string | { code: string }
export type Cell = Inline | readonly Inline[]

interface ReportTable {
  header: readonly string[]
  rows: ReadonlyArray<readonly Cell[]>
  /** The first column names each row (What / Value): text output leaves the header out. */
  keyValue?: boolean
}

export type ReportBlock =
  { kind: 'heading'; text: string } | { kind: 'table'; table: ReportTable } | { kind: 'text'; text: string }

export interface Report {
  title: string
  blocks: ReportBlock[]
}

export function heading(text: string): ReportBlock {
  return { kind: 'heading', text }
}

export function table(header: readonly string[], rows: ReadonlyArray<readonly Cell[]>): ReportBlock {
  return { kind: 'table', table: { header, rows } }
}

export function keyValueTable(rows: ReadonlyArray<readonly [string, Cell]>): ReportBlock {
  return { kind: 'table', table: { header: ['What', 'Value'], rows, keyValue: true } }
}

export function text(value: string): ReportBlock {
  return { kind: 'text', text: value }
}

const partsOf = (cell: Cell): readonly Inline[] =>
  typeof cell === 'string' || !Array.isArray(cell) ? [cell as Inline] : (cell as readonly Inline[])

function cellText(cell: Cell): string {
  return partsOf(cell)
    .map((part) => (typeof part === 'string' ? part : part.code))
    .join('')
}

/**
 * The cell as HTML: text escaped, code in <code>, on one line whatever it holds (line breaks and
 * other controls shown as escapes, see visible()), so that it cannot end the summary's HTML block.
 */
export function cellHtml(cell: Cell): string {
  return partsOf(cell)
    .map((part) =>
      typeof part === 'string' ? escapeHtml(visible(part)) : `<code>${escapeHtml(visible(part.code))}</code>`,
    )
    .join('')
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c)
}

/**
 * The report as text lines for a terminal or a CI log: tables with aligned columns. Every title,
 * cell and text is one inert line (visible()): a CI log reads workflow commands in it.
 */
export function renderText(report: Report): string {
  const lines: string[] = [visible(report.title)]
  for (const block of report.blocks) {
    if (block.kind === 'heading') lines.push('', visible(block.text))
    else if (block.kind === 'text') lines.push(`  ${visible(block.text)}`)
    else lines.push(...tableLines(block.table))
  }
  return lines.join('\n') + '\n'
}

function tableLines(model: ReportTable): string[] {
  const rows = model.rows.map((row) => row.map((cell) => visible(cellText(cell))))
  const all = model.keyValue ? rows : [model.header.map(visible), ...rows]
  const widths: number[] = []
  for (const row of all) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)))
  return all.map(
    (row) =>
      '  ' +
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
  )
}

/** Milliseconds since the epoch as an RFC 3339 time to the second: `2025-05-02T09:14:03Z`. */
export function formatEpochMs(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return ''
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')
}
