// Generated web builds for the property tests of the transfer: an index.html at the root and files of
// awkward names and sizes around the emulator's part boundaries, each written to a fresh folder.

import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import fc from 'fast-check'
import { SITE_PATH_MAX_BYTES } from '../../src/api/rules.ts'
import { RECORD_PATH } from '../../src/deploy/collect/record.ts'
import { tempDir } from '../support/helpers.ts'

const KiB = 1024
const MiB = 1024 * KiB

/**
 * The emulator's multipart geometries (files of at least multipartThreshold bytes are uploaded in
 * parts of partSize): parts of a few bytes, cheap in numbers; and parts of a MiB, past the sizes a
 * reader or a sender commonly switches strategy at.
 */
export const GEOMETRIES = {
  small: { multipartThreshold: 3 * KiB, partSize: KiB },
  large: { multipartThreshold: 2 * MiB, partSize: MiB },
} as const
export type Geometry = keyof typeof GEOMETRIES

/** One name byte past this, and a file system refuses the name (NAME_MAX on Linux and macOS). */
const NAME_MAX_BYTES = 255

export interface BuildFile {
  /** Relative, `/`-separated, as the site knows it. */
  path: string
  size: number
  /** Seeds the bytes: two files of the same size and seed have the same content. */
  seed: number
}

export interface Build {
  geometry: Geometry
  files: BuildFile[]
  includeHidden: boolean
  /** The site-record input: false leaves the deploy's record out, and lets a file of the build be there. */
  siteRecord: boolean
}

/**
 * GAMEHOST_FUZZ_KNOWN_DEFECTS=1 lets the properties draw what known-defects.test.ts pins, each of
 * which fails them until it is fixed; then it joins the generators for good.
 */
export const KNOWN_DEFECTS = Boolean(process.env.GAMEHOST_FUZZ_KNOWN_DEFECTS)
/** None now: U+FEFF, which the old site answer's parser dropped from paths, is an atom like any. */
export const KNOWN_DEFECT_ATOMS: string[] = []

const NFC_E = '\u00e9'
const NFD_E = 'e\u0301'
/**
 * Pieces of names: what a URL, a query string or a form encoding reads otherwise, non-ASCII in
 * both normal forms, 4-byte UTF-8, letters whose case maps to another length, control characters and
 * invisible ones.
 */
const ATOMS = [
  ...['a', 'B', 'game', 'Level 1', ' ', '  ', '%', '%20', '%2F', '%25', '%C3%A9', '#', '?', '+', '&'],
  ...['=', ';', ',', '@', "'", '"', '(', ')', '[', ']', '{', '}', '!', '~', '*', '$', '^', '`', '|'],
  ...[':', '\\', '<', '>', '-', '_', '..', NFC_E, NFD_E, 'caf\u00e9', 'cafe\u0301', '\u212b', '\u00c5'],
  ...[
    '\u00df',
    '\u0130',
    '\ufb01',
    '\u65e5\u672c',
    '\ud83d\ude00',
    '\ud83c\udfae',
    '\u0645\u0631\u062d\u0628\u0627',
  ],
  ...['\t', '\n', '\r', '\u007f', '\u0085', '\u00a0', '\u200d', '\u2028', '\ufffd', '\ufeff'],
  ...(KNOWN_DEFECTS ? KNOWN_DEFECT_ATOMS : []),
]
/** None that makes the build an engine's (.loader.js, .pck) or a compressed file (.br, .gz). */
const EXTENSIONS = [
  ...['.html', '.js', '.css', '.png', '.json', '.txt', '.wasm', '.data', '.svg', '.mp3', '.bin'],
  ...['', '', '.HTML', '.Js', '.tar', '.html ', '.%', '.#', '.\u00e9'],
]
const FILLERS = ['a', NFC_E, NFD_E, '\u65e5', '\ud83d\ude00', ' ', '%', '#']

const around = (sizes: readonly number[]) => sizes.flatMap((size) => [size - 1, size, size + 1])

/** Around the geometry's part boundaries (and common buffer sizes), and any size up to two parts. */
function sizeArbitrary(geometry: Geometry): fc.Arbitrary<number> {
  const { multipartThreshold: threshold, partSize: part } = GEOMETRIES[geometry]
  const boundaries = around([part, threshold, threshold + part, 4 * part])
  const buffers = geometry === 'large' ? around([64 * KiB, 256 * KiB]) : []
  return fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(0, 1) },
    { weight: 3, arbitrary: fc.constantFrom(...boundaries, ...buffers) },
    { weight: geometry === 'large' ? 6 : 3, arbitrary: fc.integer({ min: 0, max: 4 * KiB }) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: threshold + part }) },
  )
}

const byteLength = (text: string) => Buffer.byteLength(text, 'utf8')

function segmentArbitrary(hidden: boolean): fc.Arbitrary<string> {
  return fc
    .tuple(
      hidden ? fc.constantFrom('', '', '.') : fc.constant(''),
      fc.array(fc.constantFrom(...ATOMS), { minLength: 1, maxLength: 4 }),
      fc.constantFrom(...EXTENSIONS),
    )
    .map(([dot, atoms, extension]) => `${dot}${atoms.join('')}${extension}`)
    .filter((name) => isNameAllowed(name, hidden))
}

/** What the product refuses or leaves out on purpose, and what no file system takes. */
function isNameAllowed(name: string, hidden: boolean): boolean {
  if (name === '' || name === '.' || name === '..' || byteLength(name) > NAME_MAX_BYTES) return false
  return hidden || !name.startsWith('.')
}

/** Hidden, some beside the deploy's record (.well-known/gamehost.json), as a PWA's assetlinks.json is. */
const shortPathArbitrary = (hidden: boolean) =>
  fc
    .tuple(
      hidden ? fc.constantFrom('', '', '', '.well-known/') : fc.constant(''),
      fc.array(segmentArbitrary(hidden), { minLength: 1, maxLength: 3 }),
    )
    .map(([folder, segments]) => `${folder}${segments.join('/')}`)

const deepPathArbitrary = fc
  .tuple(fc.integer({ min: 8, max: 40 }), fc.constantFrom('d', 'D', NFD_E, ' ', '#'))
  .map(([depth, name]) => `${Array.from({ length: depth }, (_, i) => `${name}${i}`).join('/')}/x.txt`)

/** A path of exactly `bytes` bytes of UTF-8 (up to SITE_PATH_MAX_BYTES), in names of up to `longest`. */
const longPathArbitrary = fc
  .tuple(
    fc.oneof(
      fc.constant(SITE_PATH_MAX_BYTES),
      fc.constant(SITE_PATH_MAX_BYTES - 1),
      fc.integer({ min: 256, max: SITE_PATH_MAX_BYTES }),
    ),
    fc.constantFrom(...FILLERS),
    fc.constantFrom(200, NAME_MAX_BYTES),
  )
  .map(([bytes, filler, longest]) => pathOfBytes(bytes, filler, longest))

function pathOfBytes(bytes: number, filler: string, longest: number): string {
  const extension = '.txt'
  const segments: string[] = []
  let left = bytes - byteLength(extension)
  while (left > 0) {
    // The file's name takes the extension too; a folder's leaves at least one byte after its `/`.
    const room = left <= longest - byteLength(extension) ? left : Math.min(longest, left - 2)
    let name = ''
    while (byteLength(name + filler) <= room) name += filler
    name += 'a'.repeat(room - byteLength(name))
    segments.push(name)
    left -= room + 1
  }
  return `${segments.join('/')}${extension}`
}

const seedArbitrary = fc.integer({ min: 0, max: 3 })

const fileArbitrary = (hidden: boolean, geometry: Geometry) =>
  fc.record({
    path: fc.oneof(
      { weight: 8, arbitrary: shortPathArbitrary(hidden) },
      { weight: 1, arbitrary: deepPathArbitrary },
      { weight: 1, arbitrary: longPathArbitrary },
      // Left out when the deploy writes its record there.
      { weight: hidden ? 1 : 0, arbitrary: fc.constant(RECORD_PATH) },
    ),
    size: sizeArbitrary(geometry),
    seed: seedArbitrary,
    /** The same path in the other case, the other normal form, or with another's content too. */
    twin: fc.constantFrom('none', 'none', 'upper', 'lower', 'nfd', 'nfc', 'copy'),
  })

/**
 * Many small files in one folder of a long name: the lists of paths and presigned URLs a deploy holds
 * grow large, each URL a few KiB.
 */
const manyFilesArbitrary = fc
  .tuple(
    fc.integer({ min: 100, max: 320 }),
    fc.integer({ min: 300, max: SITE_PATH_MAX_BYTES - 20 }),
    fc.constantFrom(...FILLERS),
    seedArbitrary,
  )
  .map(([count, bytes, filler, seed]) =>
    Array.from({ length: count }, (_, i) => ({
      path: `${pathOfBytes(bytes, filler, NAME_MAX_BYTES).slice(0, -'.txt'.length)}/${i}.txt`,
      size: (i * 37) % 700,
      seed: (seed + i) % 4,
      twin: 'none',
    })),
  )

export interface BuildOptions {
  /** Of other files than index.html, before their twins; a build of many files has more. */
  maxFiles: number
  /** Builds deployed one after the other to the same namespace, each from the one before. */
  maxBuilds: number
}

const geometryArbitrary = fc.constantFrom<Geometry>('small', 'small', 'small', 'large')

/** A sequence of builds of one geometry: the first generated, each next one an edit of the one before. */
export function buildsArbitrary({ maxFiles, maxBuilds }: BuildOptions): fc.Arbitrary<Build[]> {
  return geometryArbitrary.chain((geometry) =>
    fc
      .tuple(
        buildArbitrary(geometry, maxFiles),
        fc.array(fc.tuple(buildArbitrary(geometry, maxFiles), editsArbitrary(geometry)), {
          maxLength: maxBuilds - 1,
        }),
      )
      .map(([first, nexts]) => {
        const builds = [first]
        for (const [fresh, edits] of nexts) builds.push(edited(builds[builds.length - 1]!, fresh, edits))
        return builds
      }),
  )
}

function buildArbitrary(geometry: Geometry, maxFiles: number): fc.Arbitrary<Build> {
  const modes = fc.record({
    includeHidden: fc.boolean(),
    siteRecord: fc.constantFrom(true, true, true, false),
    many: fc.oneof(
      { weight: 23, arbitrary: fc.constant(false) },
      { weight: 1, arbitrary: fc.constant(true) },
    ),
  })
  return modes.chain(({ includeHidden, siteRecord, many }) =>
    fc
      .record({
        index: fc.record({ size: sizeArbitrary(geometry), seed: seedArbitrary }),
        others: many
          ? manyFilesArbitrary
          : fc.array(fileArbitrary(includeHidden, geometry), { maxLength: maxFiles }),
      })
      .map(({ index, others }) => {
        const files: BuildFile[] = [{ path: 'index.html', ...index }]
        for (const { twin, ...file } of others) {
          files.push(file)
          const other = twinOf(file, twin)
          if (other) files.push(other)
        }
        return withToString({
          geometry,
          includeHidden,
          siteRecord,
          files: consistent(files, includeHidden, siteRecord),
        })
      }),
  )
}

type Edit = { kind: 'keep' } | { kind: 'drop' } | { kind: 'change'; size: number; seed: number }

/** What happens to each file of the build before, in order (cycled when it has more files). */
const editsArbitrary = (geometry: Geometry) =>
  fc.array(
    fc.oneof(
      { weight: 3, arbitrary: fc.constant<Edit>({ kind: 'keep' }) },
      { weight: 1, arbitrary: fc.constant<Edit>({ kind: 'drop' }) },
      {
        weight: 2,
        arbitrary: fc.record({
          kind: fc.constant('change' as const),
          size: sizeArbitrary(geometry),
          seed: fc.integer({ min: 0, max: 7 }),
        }),
      },
    ),
    { minLength: 1, maxLength: 8 },
  )

/** The next build: the files before, kept, dropped or changed, and a fresh build's added. */
function edited(before: Build, fresh: Build, edits: readonly Edit[]): Build {
  const [index, ...added] = fresh.files
  const files: BuildFile[] = [index!]
  before.files.slice(1).forEach((file, i) => {
    const edit = edits[i % edits.length]!
    if (edit.kind === 'keep') files.push(file)
    else if (edit.kind === 'change') files.push({ path: file.path, size: edit.size, seed: edit.seed })
  })
  files.push(...added)
  const { geometry, includeHidden, siteRecord } = fresh
  return withToString({
    geometry,
    includeHidden,
    siteRecord,
    files: consistent(files, includeHidden, siteRecord),
  })
}

function twinOf(file: BuildFile, twin: string): BuildFile | undefined {
  const renamed: Record<string, (p: string) => string> = {
    upper: (p) => p.toUpperCase(),
    lower: (p) => p.toLowerCase(),
    nfd: (p) => p.normalize('NFD'),
    nfc: (p) => p.normalize('NFC'),
    copy: (p) => `copy/${p}`,
  }
  const rename = renamed[twin]
  if (!rename) return undefined
  // A twin by name has bytes of its own, so that one served for the other shows.
  return { ...file, path: rename(file.path), seed: twin === 'copy' ? file.seed : file.seed + 4 }
}

/**
 * The files that can be written together and are all deployed: no path twice, none that is also
 * another's folder, none over the service's limit, none hidden unless asked, no .git at the root (a
 * repository's, refused with include-hidden), none at the record's path when it is written.
 */
function consistent(files: readonly BuildFile[], includeHidden: boolean, siteRecord: boolean): BuildFile[] {
  const kept: BuildFile[] = []
  const paths = new Set<string>()
  const folders = new Set<string>()
  for (const file of files) {
    const segments = file.path.split('/')
    const parents = segments.slice(0, -1).map((_, i) => segments.slice(0, i + 1).join('/'))
    if (
      paths.has(file.path) ||
      folders.has(file.path) ||
      parents.some((parent) => paths.has(parent)) ||
      byteLength(file.path) > SITE_PATH_MAX_BYTES ||
      segments.some((s) => byteLength(s) > NAME_MAX_BYTES || s === '' || s === '.' || s === '..') ||
      (!includeHidden && segments.some((s) => s.startsWith('.'))) ||
      /^\.git(\/|$)/.test(file.path) ||
      (siteRecord && file.path === RECORD_PATH)
    ) {
      continue
    }
    kept.push(file)
    paths.add(file.path)
    for (const parent of parents) folders.add(parent)
  }
  return kept
}

/** The paths of the builds deployed before the `index`th. */
export const pathsBefore = (builds: readonly Build[], index: number) =>
  builds.slice(0, index).flatMap((build) => build.files.map((file) => file.path))

/** A path quoted, non-ASCII as \\u escapes: its NFC and NFD forms look the same otherwise. */
export const showPath = (text: string) =>
  JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

function withToString(build: Build): Build {
  const shown = build.files.map((f) => `{ path: ${showPath(f.path)}, size: ${f.size}, seed: ${f.seed} }`)
  const head = `geometry: ${JSON.stringify(build.geometry)}, includeHidden: ${build.includeHidden}, siteRecord: ${build.siteRecord}`
  const text = `{ ${head}, files: [\n  ${shown.join(',\n  ')}\n] }`
  return Object.assign(build, { [fc.toStringMethod]: () => text })
}

/** The bytes of a file: the same for the same size and seed, a pseudo-random run (xorshift32). */
export function contentOf(file: Pick<BuildFile, 'size' | 'seed'>): Buffer {
  const words = new Uint32Array(Math.ceil(file.size / 4))
  let state = (Math.imul(file.seed + 1, 0x9e3779b1) | 1) >>> 0
  for (let i = 0; i < words.length; i++) {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    words[i] = state >>> 0
  }
  return Buffer.from(words.buffer, 0, file.size)
}

/** Writes the build to a fresh folder; answers it and each file's bytes by path. */
export async function writeBuild(build: Build): Promise<{ root: string; bytes: Map<string, Buffer> }> {
  const root = await tempDir('gamehost-prop-')
  const bytes = new Map<string, Buffer>()
  for (const file of build.files) {
    const content = contentOf(file)
    const absolute = path.join(root, ...file.path.split('/'))
    await mkdir(path.dirname(absolute), { recursive: true })
    await writeFile(absolute, content)
    bytes.set(file.path, content)
  }
  return { root, bytes }
}
