// Serving a game's web build the way its engine needs, with the CDN's only levers: each file's content
// type and the version's routes (one header per glob). A compressed Unity build needs Content-Encoding
// and the inner file's type; a threaded Godot export needs two isolation headers this CDN cannot
// send, so what works is said. What marks each engine's build is engines.ts'.

import { UsageError } from '../../api/errors.ts'
import { normalizeGlob, parseGlob, type CdnRoute } from '../../api/versions.ts'
import type { Logger } from '../../common/logger.ts'
import { Input } from '../../inputs/constants.ts'
import type { HeaderRule } from '../../inputs/headers.ts'
import {
  COMPRESSIONS,
  ENCODING_NAMES,
  ENGINES,
  GODOT,
  UNITY,
  compressionOf,
  engineFileOf,
  isBuildEvidence,
  isCompressedUnityPart,
  type Encoding,
  type EngineName,
} from './engines.ts'
import type { WebEngineChoice } from '../../inputs/deploy.ts'
import { contentTypeOf, type ArtifactFile } from './files.ts'
import { readScanned } from './read.ts'
import { planRoutes, type PlannedRoute, type RouteSpec } from './routes.ts'
import { inputAssignment, inputName } from '../../common/input-naming.ts'

export type { PlannedRoute } from './routes.ts'

interface WebBuild {
  engine: EngineName
  /** '' for the root. */
  folder: string
  /** "Unity WebGL build in Build/, compressed with Brotli". */
  summary: string
  evidence: string
}

export interface ServingPlan {
  engine: WebEngineChoice
  builds: WebBuild[]
  /** Files whose content type the engine needs other than their extension's. */
  contentTypes: Array<{ path: string; contentType: string }>
  /** Highest priority first: exactly the published version's routes, when there are any. */
  routes: PlannedRoute[]
  warnings: string[]
  notes: string[]
}

export type ReadStart = (file: ArtifactFile, bytes: number) => Buffer | Promise<Buffer>

const OCTET_STREAM = 'application/octet-stream'

/** Throws a UsageError when the routes do not fit the CDN or a named engine's build is not there. */
export async function planServing(
  files: readonly ArtifactFile[],
  engine: WebEngineChoice,
  headers: readonly HeaderRule[],
  readStart: ReadStart = readFileStart,
): Promise<ServingPlan> {
  const plan: ServingPlan = { engine, builds: [], contentTypes: [], routes: [], warnings: [], notes: [] }
  const planning: Planning = { plan, routes: [], readStart }
  if (engine !== 'none') {
    const folders = [...indexFolders(files, engine === 'unity').values()]
    if (engine !== 'godot')
      for (const folder of folders) await planUnity(folder, planning, engine === 'unity')
    if (engine !== 'unity') for (const folder of folders) await planGodot(folder, planning)
    if (engine !== 'auto' && plan.builds.length === 0) {
      throw new UsageError(
        `${inputName(Input.WebEngine)} is ${engine}, but no ${ENGINES[engine].title} is in ${inputName(Input.Path)}: ` +
          `${ENGINES[engine].missing}, or set ${inputName(Input.WebEngine)} to auto`,
      )
    }
  }
  const { routes, warnings } = planRoutes(planning.routes, headers, files)
  plan.routes = routes
  plan.warnings.push(...warnings)
  return plan
}

export function applyContentTypes(files: ArtifactFile[], plan: ServingPlan): void {
  const types = new Map(plan.contentTypes.map(({ path, contentType }) => [path, contentType]))
  for (const file of files) {
    const contentType = types.get(file.path)
    if (contentType) file.contentType = contentType
  }
}

export function cdnRoutes(routes: readonly PlannedRoute[]): CdnRoute[] {
  return routes.map((route) => ({
    glob: route.glob,
    priority: route.priority,
    middlewares: [{ kind: { custom_headers: { headers: [{ ...route.header }] } } }],
  }))
}

/** Globs as the service writes them back, in any order. */
export function sameRoutes(a: readonly CdnRoute[] | undefined, b: readonly CdnRoute[]): boolean {
  const key = (route: CdnRoute) =>
    JSON.stringify([
      normalizeGlob(route.glob),
      route.priority,
      route.middlewares.flatMap((m) => m.kind.custom_headers?.headers ?? []).map((h) => [h.name, h.value]),
    ])
  const keys = (routes: readonly CdnRoute[]) => routes.map(key).sort()
  return JSON.stringify(keys(a ?? [])) === JSON.stringify(keys(b))
}

export function logServingPlan(plan: ServingPlan, logger: Pick<Logger, 'info' | 'warning'>): void {
  const choice = inputAssignment(Input.WebEngine, plan.engine)
  if (plan.engine === 'none') logger.info(`${choice}: no engine's needs are looked for`)
  else if (plan.builds.length === 0)
    logger.info(`${choice}: no ${UNITY.title} or ${GODOT.title} in the site, nothing to set`)
  for (const build of plan.builds) logger.info(`${choice}: recognised a ${build.summary} (${build.evidence})`)
  for (const note of plan.notes) logger.info(note)
  if (plan.contentTypes.length) {
    const types = plan.contentTypes.map((c) => `${c.path} ${c.contentType}`)
    logger.info(`Content types set for the engine: ${types.join(', ')}`)
  }
  for (const { glob, header, priority, from } of plan.routes)
    logger.info(`Route ${glob}: ${header.name}: ${header.value} (priority ${priority}, ${from})`)
  for (const warning of plan.warnings) logger.warning(warning)
}

interface Folder {
  /** '' for the root. */
  path: string
  /** By base name, in the site's order. */
  files: Map<string, ArtifactFile>
  /** `<name>` of each subfolder named `<name>.asyncpck`. */
  asyncPacks: string[]
}

interface Planning {
  plan: ServingPlan
  routes: RouteSpec[]
  readStart: ReadStart
}

async function planUnity({ path: folder, files }: Folder, planning: Planning, named: boolean): Promise<void> {
  const { plan, routes, readStart } = planning
  const names = [...files.keys()]
  const legacy =
    names.includes(UNITY.legacyLoader) &&
    names.some((name) => UNITY.legacyCompanions.some((ending) => name.endsWith(ending)))
  const evidenceName =
    unityLoader(names) ??
    (legacy ? UNITY.legacyLoader : undefined) ??
    (named ? names.find(isCompressedUnityPart) : undefined)
  if (!evidenceName) return

  const encodings = new Set<Encoding>()
  const unityweb = new Map<Encoding | 'none', ArtifactFile[]>()
  for (const file of files.values()) {
    const { inner, encoding } = compressionOf(file.path)
    if (!encoding) continue
    if (encoding === 'first-bytes') {
      const told = unitywebEncoding(await readStart(file, UNITY.unityweb.bytes))
      if (!unityweb.has(told)) unityweb.set(told, [])
      unityweb.get(told)!.push(file)
    } else encodings.add(encoding)
    // The type of the file inside: the browser sees it once it has decoded the answer.
    const contentType = contentTypeOf(inner) ?? OCTET_STREAM
    if (contentType !== file.contentType) plan.contentTypes.push({ path: file.path, contentType })
  }
  for (const { suffix, encoding } of COMPRESSIONS) {
    if (encoding !== 'first-bytes' && encodings.has(encoding)) {
      routes.push(encodingRoute(folderGlob(folder, `*${suffix}`), encoding))
    }
  }
  const unitywebCompressed = [...unityweb].filter(
    (group): group is [Encoding, ArtifactFile[]] => group[0] !== 'none',
  )
  if (unitywebCompressed.length === 1 && !unityweb.has('none')) {
    routes.push(encodingRoute(folderGlob(folder, `*${UNITY.unityweb.ending}`), unitywebCompressed[0]![0]))
  } else {
    // Mixed (or some not compressed): each compressed one by its own name.
    for (const [encoding, group] of unitywebCompressed) {
      for (const file of group) routes.push(encodingRoute(literalGlob(file.path), encoding))
    }
  }
  const used = new Set([...encodings, ...unitywebCompressed.map(([encoding]) => encoding)])
  const compression = [...used].map((encoding) => ENCODING_NAMES[encoding]).join(' and ')
  plan.builds.push({
    engine: 'unity',
    folder,
    summary: `${UNITY.title} in ${folder ? `${folder}/` : 'the root'}, ${compression ? `compressed with ${compression}` : 'not compressed'}`,
    evidence: `${pathIn(folder, evidenceName)}${unityweb.size ? `; the ${UNITY.unityweb.ending} files told by their first bytes` : ''}`,
  })
  if (!compression) {
    plan.notes.push(
      `The Unity build in ${folder || 'the root'} is not compressed: its files are served as they are, with their own content types`,
    )
  }
}

/** The first `<name>.loader.js` with a modern part named `<name>.…` beside it. */
function unityLoader(names: readonly string[]): string | undefined {
  const partPrefixes = new Set<string>()
  for (const name of names) {
    if (engineFileOf(name)?.unityPart !== 'modern') continue
    for (let dot = name.indexOf('.'); dot >= 0; dot = name.indexOf('.', dot + 1)) {
      partPrefixes.add(name.slice(0, dot + 1))
    }
  }
  return names.find(
    (name) =>
      name.endsWith(UNITY.loaderEnding) && partPrefixes.has(name.slice(0, 1 - UNITY.loaderEnding.length)),
  )
}

/** The root files that make the site look like the inside of a Unity build's `Build/` folder. */
export function unityBuildFolderParts(rootNames: readonly string[]): string[] {
  const modern = (name: string) => engineFileOf(name)?.unityPart === 'modern'
  const parts = rootNames.filter((name) => modern(name) || name.endsWith(UNITY.loaderEnding))
  const hasLoader = unityLoader(rootNames) !== undefined || rootNames.includes(UNITY.legacyLoader)
  return hasLoader || parts.some((name) => modern(name) && engineFileOf(name)!.heavy) ? parts : []
}

/** As Unity's loader tells it. */
function unitywebEncoding(start: Buffer): Encoding | 'none' {
  const [first, second] = UNITY.unityweb.gzipMagic
  if (start.length >= 2 && start[0] === first && start[1] === second) return 'gzip'
  if (start.includes(UNITY.unityweb.brotliMarker, 0, 'latin1')) return 'br'
  return 'none'
}

function encodingRoute(glob: string, encoding: Encoding): RouteSpec {
  return { glob, header: { name: 'Content-Encoding', value: encoding }, from: 'web-engine' }
}

async function planGodot(
  { path: folder, files, asyncPacks }: Folder,
  { plan, readStart }: Planning,
): Promise<void> {
  const packs = [...files.keys()]
    .filter((name) => name.endsWith(GODOT.pack))
    .map((name) => name.slice(0, -GODOT.pack.length))
  let folderHtml: Promise<ArtifactFile | undefined> | undefined
  for (const name of new Set([...packs, ...asyncPacks])) {
    const companions = GODOT.companions.map((ending) => `${name}${ending}`)
    if (!companions.every((companion) => files.has(companion))) continue
    const html =
      files.get(`${name}${GODOT.page}`) ?? (await (folderHtml ??= godotHtml(files.values(), readStart)))
    const text = html && (await readStart(html, GODOT.htmlBytes)).toString('utf8')
    const pack = files.get(`${name}${GODOT.pack}`)
    if (pack && pack.contentType !== OCTET_STREAM) {
      plan.contentTypes.push({ path: pack.path, contentType: OCTET_STREAM })
    }
    const worker = `${name}${GODOT.threadsWorker}`
    const threads = godotThreads(text, html, files.has(worker) ? pathIn(folder, worker) : undefined)
    const serviceWorker = text && GODOT.serviceWorker.exec(text)?.[1]
    const ensures = text !== undefined && GODOT.ensuresIsolation.test(text)
    const isolatedByWorker = ensures && serviceWorker !== undefined && files.has(serviceWorker)
    const page = html?.path ?? pathIn(folder, `${name}${GODOT.page}`)
    plan.builds.push({
      engine: 'godot',
      folder,
      summary:
        `${GODOT.title} ${page}, ${threads.threads ? 'with thread support' : 'single-threaded'}` +
        (threads.threads && isolatedByWorker ? ', isolated by its service worker' : ''),
      evidence: `${pathIn(folder, pack ? `${name}${GODOT.pack}` : `${name}${GODOT.asyncPack}/`)}, ${companions.join(' and ')}; ${threads.evidence}`,
    })
    if (!threads.threads) {
      plan.notes.push(
        `${page} is single-threaded: it needs no cross-origin isolation, only HTTPS, which the CDN serves`,
      )
    } else if (isolatedByWorker) {
      plan.notes.push(
        `${page} needs cross-origin isolation, which its service worker (${pathIn(folder, serviceWorker)}, ` +
          '"Ensure Cross Origin Isolation Headers") gives: on the first visit the page installs it and reloads once',
      )
    } else {
      plan.warnings.push(godotIsolationWarning(page, threads.evidence, ensures, serviceWorker))
    }
  }
}

function godotThreads(text: string | undefined, html: ArtifactFile | undefined, worker: string | undefined) {
  const constant = text && GODOT.threadsConstant.exec(text)
  if (constant) {
    return {
      threads: constant[1] === 'true',
      evidence: `GODOT_THREADS_ENABLED = ${constant[1]} in ${html!.path}`,
    }
  }
  if (worker) {
    return {
      threads: true,
      evidence: `${worker}, the threads' worker of Godot 4.0 to 4.2 (or a Godot 3 threads export)`,
    }
  }
  const noConstant = html ? `no GODOT_THREADS_ENABLED in ${html.path}` : 'no HTML page to read,'
  return { threads: false, evidence: `${noConstant} and no .worker.js` }
}

function godotIsolationWarning(page: string, evidence: string, ensures: boolean, serviceWorker?: string) {
  let own = ''
  if (serviceWorker && ensures)
    own = ` Its service worker ${serviceWorker} is not in ${inputName(Input.Path)}.`
  else if (serviceWorker)
    own = ' Its service worker does not ensure the isolation headers (the option is off).'
  return (
    `${page} is a Godot web export with thread support (${evidence}): it needs the page cross-origin isolated, ` +
    'with both Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp, and this ' +
    'CDN cannot send both (it adds at most one header to a path). As deployed, the game stops at start saying ' +
    `Cross-Origin Isolation and SharedArrayBuffer are missing.${own} What works: export with Progressive Web App > ` +
    'Enabled and Progressive Web App > Ensure Cross Origin Isolation Headers on (its service worker adds both ' +
    'headers; the first visit reloads the page once), or export single-threaded (Godot 4.3 and later: Variant > ' +
    'Thread Support off).'
  )
}

/** The page of a Godot export named otherwise than its files. */
async function godotHtml(files: Iterable<ArtifactFile>, readStart: ReadStart) {
  for (const file of files) {
    const html = /\.html?$/i.test(file.path)
    if (html && (await readStart(file, GODOT.htmlBytes)).includes(GODOT.configMarker)) return file
  }
  return undefined
}

/** Only the folders with a build's evidence are indexed: a list per folder of every folder costs (BENCHMARKS.md). */
function indexFolders(files: readonly ArtifactFile[], unityNamed: boolean): Map<string, Folder> {
  const candidates = new Map<string, Set<string>>()
  const candidate = (folder: string) => {
    if (!candidates.has(folder)) candidates.set(folder, new Set())
    return candidates.get(folder)!
  }
  const marker = `${GODOT.asyncPack}/`
  for (const { path } of files) {
    if (isBuildEvidence(path, unityNamed)) candidate(parentOf(path))
    for (let end = path.indexOf(marker); end >= 0; end = path.indexOf(marker, end + 1)) {
      const pack = path.slice(0, end)
      candidate(parentOf(pack)).add(baseName(pack))
    }
  }
  const folders = new Map<string, Folder>()
  if (candidates.size === 0) return folders
  for (const file of files) {
    const path = parentOf(file.path)
    const packs = candidates.get(path)
    if (!packs) continue
    if (!folders.has(path)) folders.set(path, { path, files: new Map(), asyncPacks: [...packs] })
    folders.get(path)!.files.set(baseName(file.path), file)
  }
  return folders
}

function parentOf(path: string): string {
  const slash = path.lastIndexOf('/')
  return slash < 0 ? '' : path.slice(0, slash)
}

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1)
const pathIn = (folder: string, name: string) => (folder ? `${folder}/${name}` : name)

/** `**` before the pattern when the folder's name is no glob. */
function folderGlob(folder: string, pattern: string): string {
  const glob = pathIn(folder, pattern)
  return parseGlob(glob) ? glob : `**/${pattern}`
}

function literalGlob(path: string): string {
  return parseGlob(path) ? path : `**/${baseName(path).replace(/\*+/g, '*')}`
}

const readFileStart: ReadStart = (file, bytes) => readScanned(file, 0, Math.min(bytes, file.size))
