// `headers`: a YAML map of route glob to one header. Checked before anything is created: the service
// stores one header per glob (a second one makes the version's creation fail half done), the CDN reads
// only the first 10 routes, and names and values have limits.

import { parseDocument } from 'yaml'
import { UsageError } from '../api/errors.ts'
import {
  CDN_HEADER_NAME_MAX_BYTES,
  CDN_HEADER_VALUE_MAX_BYTES,
  CDN_SERVED_MAX,
  PAGES,
  globMatchesOnlyPages,
  normalizeGlob,
  parseGlob,
} from '../api/versions.ts'
import { Input } from './constants.ts'
import { inputName } from '../common/input-naming.ts'
import { usage } from './common.ts'

export interface HeaderRule {
  glob: string
  name: string
  value: string
}

const EXAMPLE = `'assets/**': {Cache-Control: max-age=31536000}`
/** An HTTP field name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const hasControl = (value: string) =>
  [...value].some((char) => {
    const code = char.charCodeAt(0)
    return (code < 0x20 && code !== 0x09) || code === 0x7f
  })

export function readHeaders(raw: string): HeaderRule[] {
  if (!raw.trim()) return []
  const document = parseDocument(raw, { uniqueKeys: true, prettyErrors: false })
  const parseError = document.errors[0]
  if (parseError)
    throw usage`{headers} is not valid YAML (${oneLine(parseError.message)}). Give a map of glob to one header, like ${EXAMPLE}, and quote each glob: YAML reads a leading * as an alias`
  const value: unknown = document.toJS({ mapAsMap: true })
  if (value === null || value === undefined) return []
  if (!(value instanceof Map))
    throw usage`{headers} must be a map of glob to one header, like ${EXAMPLE}; it is ${describe(value)}`
  const rules: HeaderRule[] = []
  const globs = new Map<string, string>()
  for (const [key, header] of value as Map<unknown, unknown>) {
    if (typeof key === 'object' && key !== null)
      throw usage`{headers}: each glob must be text, like '**/*.html'; one is ${describe(key)}`
    const glob = scalarText(key ?? '')
    checkGlob(glob)
    const normalized = normalizeGlob(glob)
    const same = globs.get(normalized)
    if (same !== undefined)
      throw usage`{headers}: '${same}' and '${glob}' are the same glob to the service ('${normalized}'), which keeps one route per glob: merge them`
    globs.set(normalized, glob)
    rules.push(readHeader(glob, header))
  }
  if (rules.length > CDN_SERVED_MAX)
    throw usage`{headers} has ${rules.length} globs; the CDN reads only the first ${CDN_SERVED_MAX} routes of a version (these and the ones {web-engine} sets, together): give at most ${CDN_SERVED_MAX}`
  return rules
}

function checkGlob(glob: string): void {
  const at = `${inputName(Input.Headers)}: '${glob}'`
  if (glob === '') throw usage`{headers}: an empty glob matches nothing; give one like '**/*.html'`
  if (glob.startsWith('/'))
    throw new UsageError(
      `${at} starts with '/': globs are relative to the site's root, like '${glob.replace(/^\/+/, '') || '**'}'`,
    )
  if (!parseGlob(glob)?.length)
    throw new UsageError(
      `${at} is not a glob the service takes: a segment with ** holds nothing else, and * never follows * ` +
        `(write '**/*.html', not '**.html')`,
    )
}

function readHeader(glob: string, header: unknown): HeaderRule {
  const at = `${inputName(Input.Headers)}: '${glob}'`
  if (!(header instanceof Map))
    throw new UsageError(`${at} must map to one header, like ${EXAMPLE}; it is ${describe(header)}`)
  const entries = [...(header as Map<unknown, unknown>)]
  if (entries.length === 0) throw new UsageError(`${at} has no header: give one, like ${EXAMPLE}`)
  if (entries.length > 1) {
    const names = entries.map(([name]) => scalarText(name))
    throw new UsageError(
      `${at} has ${entries.length} headers (${names.join(', ')}): the service stores one header per glob, and a ` +
        'version with more fails to be created. Keep one, or give each header its own glob',
    )
  }
  const [[rawName, rawValue]] = entries as [[unknown, unknown]]
  const name = scalarText(rawName)
  const atHeader = `${at} header '${name}'`
  if (Buffer.byteLength(name, 'utf8') > CDN_HEADER_NAME_MAX_BYTES)
    throw new UsageError(
      `${at}: the header name is longer than ${CDN_HEADER_NAME_MAX_BYTES} bytes, the most the service takes`,
    )
  if (!TOKEN.test(name))
    throw new UsageError(`${atHeader} is not a header name: use letters, digits and - (like Cache-Control)`)
  if (rawValue === null || rawValue === undefined) throw new UsageError(`${atHeader} has no value`)
  if (typeof rawValue === 'object')
    throw new UsageError(`${atHeader} must have one value (text), not ${describe(rawValue)}`)
  const value = scalarText(rawValue)
  const bytes = Buffer.byteLength(value, 'utf8')
  if (bytes > CDN_HEADER_VALUE_MAX_BYTES)
    throw new UsageError(
      `${atHeader} has a value of ${bytes} bytes; the service takes at most ${CDN_HEADER_VALUE_MAX_BYTES}`,
    )
  if (hasControl(value))
    throw new UsageError(
      `${atHeader} has a line break or control character in its value, which a header cannot hold`,
    )
  const dropped = pageLayer(name)
  if (dropped && globMatchesOnlyPages(glob))
    throw new UsageError(
      `${atHeader} never reaches a browser: '${glob}' matches only pages (${PAGES}), and on pages the CDN ${dropped.effect} ` +
        `after the routes' headers. ${dropped.instead}`,
    )
  return { glob, name, value }
}

/** What the CDN's page layer does to a header on pages, after the routes' headers. */
const PAGE_LAYER: Record<string, { effect: string; sent: string; instead: string }> = {
  'cache-control': {
    effect: 'sends Cache-Control: no-cache, no-store in its place',
    sent: 'Cache-Control: no-cache, no-store',
    instead: 'Remove it: pages are never cached',
  },
  'content-security-policy': {
    effect: 'removes Content-Security-Policy',
    sent: 'no Content-Security-Policy',
    instead:
      'Remove it, and give the page its policy itself: <meta http-equiv="Content-Security-Policy" content="...">',
  },
  'x-frame-options': {
    effect: 'removes X-Frame-Options',
    sent: 'no X-Frame-Options',
    instead: 'Remove it: this CDN cannot keep its pages out of frames',
  },
  'x-xss-protection': {
    effect: 'removes X-XSS-Protection',
    sent: 'no X-XSS-Protection',
    instead: 'Remove it (browsers ignore it today anyway)',
  },
}

export function pageLayer(name: string): (typeof PAGE_LAYER)[string] | undefined {
  return Object.hasOwn(PAGE_LAYER, name.toLowerCase()) ? PAGE_LAYER[name.toLowerCase()] : undefined
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'empty'
  if (value instanceof Map) return 'a map'
  if (Array.isArray(value)) return 'a list'
  return `the ${typeof value} '${scalarText(value)}'`
}

function scalarText(value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value)
  return typeof value
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim()
