// namespace-prefix, preview-ttl and max-previews, read alike by the deploy (which sweeps the other
// previews when it deploys one) and by the sweep.

import { nameIdProblems } from '../api/rules.ts'
import { plural } from '../common/format.ts'
import { readOptional, readOptionalInteger, usage, type GetInput } from './common.ts'
import { INPUTS, Input } from './table.ts'

export interface PreviewLimits {
  /** Previews are named `<prefix><number>`, or `<prefix><number>-<key>` for one site of several. */
  prefix: string
  /** A preview not deployed for this long is retired; undefined: never, whatever its age. */
  ttlMs: number | undefined
  /** At most this many pull requests keep a live preview; undefined: no cap. */
  maxPreviews: number | undefined
}

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS
const MAX_TTL_MS = 366 * DAY_MS
const MAX_PREVIEWS_CAP = 10_000

export function readPreviewLimits(get: GetInput): PreviewLimits {
  return {
    prefix: readPrefix(get),
    ttlMs: readTtl(get),
    maxPreviews: readOptionalInteger(Input.MaxPreviews, get(Input.MaxPreviews), 1, MAX_PREVIEWS_CAP),
  }
}

/** A prefix that makes valid name_ids with a number. */
function readPrefix(get: GetInput): string {
  const prefix = readOptional(get, Input.NamespacePrefix) ?? INPUTS.NamespacePrefix.default
  if (nameIdProblems(`${prefix}1`).length)
    throw usage`{namespace-prefix} '${prefix}' cannot begin a namespace's name_id: use a-z and 0-9 with single dashes, ending with a dash or not (like 'pr-')`
  return prefix
}

function readTtl(get: GetInput): number | undefined {
  const text = readOptional(get, Input.PreviewTtl) ?? INPUTS.PreviewTtl.default
  if (/^0+[dh]?$/.test(text)) return undefined
  const match = /^([0-9]{1,6})([dh])$/.exec(text)
  const ms = match ? Number(match[1]) * (match[2] === 'd' ? DAY_MS : HOUR_MS) : NaN
  if (!(ms <= MAX_TTL_MS))
    throw usage`{preview-ttl} '${text}' is not an age the sweep takes: write days or hours, like 30d or 36h, at most 366d (0 keeps previews whatever their age)`
  return ms
}

export function formatTtl(ms: number): string {
  return ms % DAY_MS === 0 ? `${ms / DAY_MS}d` : `${Math.round(ms / HOUR_MS)}h`
}

/** `31 days`, `5 hours`, `under an hour`. */
export function describeAge(ms: number): string {
  if (ms >= 2 * DAY_MS) return `${Math.floor(ms / DAY_MS)} days`
  if (ms >= HOUR_MS) {
    return plural(Math.floor(ms / HOUR_MS), 'hour')
  }
  return 'under an hour'
}

/** The pull request a preview's namespace is named for (`pr-12`, `pr-12-game`: 12). */
export function previewNumber(nameId: string, prefix: string): number | undefined {
  if (!nameId.startsWith(prefix)) return undefined
  const match = /^([1-9][0-9]{0,9})(?:-[a-z0-9]+(?:-[a-z0-9]+)*)?$/.exec(nameId.slice(prefix.length))
  return match ? Number(match[1]) : undefined
}
