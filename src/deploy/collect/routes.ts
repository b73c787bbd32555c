import { inputName } from '../../common/input-naming.ts'
import { plural } from '../../common/format.ts'
import { UsageError } from '../../api/errors.ts'
import {
  CDN_PRIORITY_MAX,
  CDN_SERVED_MAX,
  PAGES,
  compareGlobSpecificity,
  globMatches,
  globMatchesPages,
  globsOverlap,
  isPage,
  normalizeGlob,
  type CdnHeader,
} from '../../api/versions.ts'
import { Input } from '../../inputs/constants.ts'
import { pageLayer, type HeaderRule } from '../../inputs/headers.ts'
import type { ArtifactFile } from './files.ts'

export interface RouteSpec {
  glob: string
  header: CdnHeader
  /** The input that asked for the route, by its name. */
  from: 'web-engine' | 'headers'
}

export interface PlannedRoute extends RouteSpec {
  priority: number
}

type SitePaths = readonly Pick<ArtifactFile, 'path'>[]

/**
 * Priorities from 100 down: the more specific glob first, then `headers` before the engine's, then
 * as given. A `headers` glob equal to an engine's replaces it. Warns where two overlap: only the
 * higher one's header is sent there.
 */
export function planRoutes(
  engine: readonly RouteSpec[],
  headers: readonly HeaderRule[],
  files: SitePaths = [],
): { routes: PlannedRoute[]; warnings: string[] } {
  const warnings: string[] = []
  const user = headers.map(({ glob, name, value }): RouteSpec => ({
    glob,
    header: { name, value },
    from: 'headers',
  }))
  const kept = engine.filter((route) => {
    const mine = user.find((rule) => normalizeGlob(rule.glob) === normalizeGlob(route.glob))
    if (mine) {
      warnings.push(
        `${inputName(Input.Headers)}: '${mine.glob}' replaces the route ${inputName(Input.WebEngine)} set for that glob ` +
          `(${route.header.name}: ${route.header.value}): the service keeps one header per glob`,
      )
    }
    return !mine
  })
  const all = [...user, ...kept]
  if (all.length > CDN_SERVED_MAX) {
    throw new UsageError(
      `${all.length} routes: ${user.length} from ${inputName(Input.Headers)} and ${kept.length} for the web engine ` +
        `(${kept.map((r) => r.glob).join(', ')}); the CDN reads only the first ${CDN_SERVED_MAX} routes of a version. ` +
        `Give fewer ${inputName(Input.Headers)}${kept.length ? `, or set ${inputName(Input.WebEngine)} to none and give the engine's headers yourself` : ''}`,
    )
  }
  // A stable sort: among equally specific globs, `headers` (listed first) before the engine's, as given.
  const routes = all
    .sort((a, b) => compareGlobSpecificity(a.glob, b.glob))
    .map((route, index): PlannedRoute => ({ ...route, priority: CDN_PRIORITY_MAX - index }))
  warnings.push(...overlapWarnings(routes, files))
  warnings.push(...routes.flatMap((route) => pageLayerWarning(route, files) ?? []))
  return { routes, warnings }
}

/** Each overlapping pair, with how many files both match and the first: each glob tried once a file. */
function overlapWarnings(routes: readonly PlannedRoute[], files: SitePaths): string[] {
  const pairs = routes.flatMap((higher, i) =>
    routes
      .slice(i + 1)
      .filter((lower) => globsOverlap(higher.glob, lower.glob))
      .map((lower) => ({ higher, lower, count: 0, first: undefined as string | undefined })),
  )
  if (!pairs.length) return []
  const globs = [...new Set(pairs.flatMap(({ higher, lower }) => [higher.glob, lower.glob]))]
  for (const { path } of files) {
    const matched = new Set(globs.filter((glob) => globMatches(glob, `/${path}`)))
    if (matched.size === 0) continue
    for (const pair of pairs) {
      if (!matched.has(pair.higher.glob) || !matched.has(pair.lower.glob)) continue
      pair.count++
      pair.first ??= path
    }
  }
  return pairs.map(({ higher, lower, count, first }) => {
    const example = first
      ? ` (${plural(count, 'file')} of this site, like ${first})`
      : ' (no file of this site yet)'
    return (
      `Routes '${lower.glob}' (${lower.header.name}, ${lower.from}) and '${higher.glob}' ` +
      `(${higher.header.name}, ${higher.from}) overlap: where both match${example}, the CDN sends only ` +
      `${higher.header.name}, from '${higher.glob}', whose priority is higher (${higher.priority} > ${lower.priority}); ` +
      `${lower.header.name} is not sent there`
    )
  })
}

/** A `headers` route whose header the CDN's page layer sets or removes on the pages it matches. */
function pageLayerWarning(route: PlannedRoute, files: SitePaths): string | undefined {
  const layer = pageLayer(route.header.name)
  if (route.from !== 'headers' || !layer || !globMatchesPages(route.glob)) return undefined
  const pages: string[] = []
  const others: string[] = []
  for (const { path } of files) {
    if (globMatches(route.glob, `/${path}`)) (isPage(`/${path}`) ? pages : others).push(path)
  }
  // Pages are served from the site's .html files (/ and */ from index.html): none matched, none dropped.
  if (!pages.length) return undefined
  const some = (list: string[]) =>
    list.length ? `${plural(list.length, 'file')} of this site, like ${list[0]}` : 'none of this site yet'
  const header = `${route.header.name}: ${route.header.value}`
  return (
    `${inputName(Input.Headers)}: '${route.glob}' sets ${header}, but on pages (${PAGES}: ${some(pages)}) the CDN ${layer.effect} ` +
    `after the routes' headers, so pages get ${layer.sent}; only the other files it matches (${some(others)}) get ${header}`
  )
}
