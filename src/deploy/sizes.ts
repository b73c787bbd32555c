// This build's sizes against what compare-with's namespace serves (its record): the engine's files
// always shown, the other changes largest first.

import { formatBytes, plural } from '../common/format.ts'
import { isHeavyEngineFile } from './collect/engines.ts'
import type { Manifest } from './collect/files.ts'
import type { SiteRecord } from './collect/record.ts'

export const SIZE_ROWS_SHOWN = 15

interface SizeRow {
  path: string
  before?: number
  after?: number
  engine: boolean
}

export interface SizeChange {
  /** The namespace compared with. */
  base: string
  baseCommit?: string
  totalBefore: number
  totalAfter: number
  rows: SizeRow[]
  /** The changed files left out of the rows. */
  more: { count: number; delta: number }
  added: number
  removed: number
  changed: number
}

export function compareSizes(base: string, record: SiteRecord, manifest: Manifest): SizeChange {
  const before = new Map(record.files.map((f) => [f.path, f.size]))
  const after = new Map(manifest.files.map((f) => [f.path, f.size]))
  const rows: SizeRow[] = []
  for (const [path, size] of after) {
    rows.push({ path, before: before.get(path), after: size, engine: isHeavyEngineFile(path) })
  }
  for (const [path, size] of before) {
    if (!after.has(path)) rows.push({ path, before: size, engine: isHeavyEngineFile(path) })
  }
  const changed = rows.filter((row) => row.before !== row.after)
  const byChange = (a: SizeRow, b: SizeRow) =>
    Math.abs(delta(b)) - Math.abs(delta(a)) ||
    (b.after ?? b.before ?? 0) - (a.after ?? a.before ?? 0) ||
    (a.path < b.path ? -1 : 1)
  const engine = rows.filter((row) => row.engine).sort(byChange)
  const listed = [...engine, ...changed.filter((row) => !row.engine).sort(byChange)]
  const left = listed.slice(SIZE_ROWS_SHOWN).filter((row) => row.before !== row.after)
  return {
    base,
    baseCommit: record.commit,
    totalBefore: record.totalBytes,
    totalAfter: manifest.totalBytes,
    rows: listed.slice(0, SIZE_ROWS_SHOWN).sort(byChange),
    more: { count: left.length, delta: left.reduce((sum, row) => sum + delta(row), 0) },
    added: rows.filter((row) => row.before === undefined).length,
    removed: rows.filter((row) => row.after === undefined).length,
    changed: changed.length,
  }
}

function delta(row: Pick<SizeRow, 'before' | 'after'>): number {
  return (row.after ?? 0) - (row.before ?? 0)
}

/** `+1.5 MiB (+12.0%)`, `-300 B`, `no change`. */
export function describeDelta(before: number | undefined, after: number | undefined): string {
  const change = (after ?? 0) - (before ?? 0)
  if (after === undefined) return `removed (${signed(change)})`
  if (before === undefined) return `new (${signed(change)})`
  if (change === 0) return 'no change'
  const percent = before > 0 ? ` (${change > 0 ? '+' : ''}${((change / before) * 100).toFixed(1)}%)` : ''
  return `${signed(change)}${percent}`
}

function signed(bytes: number): string {
  return `${bytes < 0 ? '-' : '+'}${formatBytes(Math.abs(bytes))}`
}

export function sizeCell(bytes: number | undefined): string {
  return bytes === undefined ? '-' : formatBytes(bytes)
}

export function sizeSummary(change: SizeChange): string {
  const { totalBefore, totalAfter } = change
  const counts = `${plural(change.changed, 'file')} changed (${change.added} new, ${change.removed} removed)`
  return `Total ${formatBytes(totalBefore)} → ${formatBytes(totalAfter)}: ${describeDelta(totalBefore, totalAfter)}; ${counts}`
}

/** The last row of a cut table: `and 19 more files changed` and `+190 B in all`. */
export function moreRow(change: SizeChange): { files: string; change: string } | undefined {
  const { count, delta: sum } = change.more
  if (!count) return undefined
  return {
    files: `and ${plural(count, 'more file')} changed`,
    change: sum === 0 ? 'no change in all' : `${signed(sum)} in all`,
  }
}
