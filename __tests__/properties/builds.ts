// Generated web builds for the property tests of the transfer: an index.html at the root and files of
// awkward names and sizes around the emulator's part boundaries, each written to a fresh folder.

import { hash } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import fc from 'fast-check'
import { SITE_PATH_MAX_BYTES } from '../../src/api/rules.ts'
import { tempDir } from '../support/helpers.ts'

/** Files of at least this many bytes are multipart uploads, in parts of PART_SIZE. */
export const MULTIPART_THRESHOLD = 3 * 1024
export const PART_SIZE = 1024
export const GEOMETRY = { multipartThreshold: MULTIPART_THRESHOLD, partSize: PART_SIZE } as const

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
  files: BuildFile[]
  includeHidden: boolean
}

const NFC_E = '\u00e9'
const NFD_E = 'e\u0301'
/**
 * Pieces of names: what a URL, a query string or a form encoding reads otherwise, non-ASCII in
 * both normal forms, 4-byte UTF-8, and letters whose case maps to another length.
 */
const ATOMS = [
  ...['a', 'B', 'game', 'Level 1', ' ', '  ', '%', '%20', '%2F', '%25', '#', '?', '+', '&', '='],
  ...[';', ',', '@', "'", '"', '(', ')', '[', ']', '{', '}', '!', '~', '*', '$', '^', '`', '|'],
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
]
/** None that makes the build an engine's (.loader.js, .pck) or a compressed file (.br, .gz). */
const EXTENSIONS = [
  ...['.html', '.js', '.css', '.png', '.json', '.txt', '.wasm', '.data', '.svg', '.mp3', '.bin'],
  ...['', '', '.HTML', '.Js', '.tar', '.html ', '.%', '.#', '.\u00e9'],
]
const FILLERS = ['a', NFC_E, NFD_E, '\u65e5', '\ud83d\ude00', ' ', '%', '#']

/** Around the emulator's part boundaries, and any small size. */
export const sizeArbitrary: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, 1),
  fc.constantFrom(PART_SIZE - 1, PART_SIZE, PART_SIZE + 1),
  fc.constantFrom(MULTIPART_THRESHOLD - 1, MULTIPART_THRESHOLD, MULTIPART_THRESHOLD + 1),
  fc.constantFrom(4 * PART_SIZE - 1, 4 * PART_SIZE, 4 * PART_SIZE + 1),
  fc.integer({ min: 0, max: 5 * PART_SIZE }),
)

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
  if (name === '.git' || name === '.well-known') return false
  return hidden || !name.startsWith('.')
}

const shortPathArbitrary = (hidden: boolean) =>
  fc.array(segmentArbitrary(hidden), { minLength: 1, maxLength: 3 }).map((s) => s.join('/'))

const deepPathArbitrary = fc
  .tuple(fc.integer({ min: 8, max: 40 }), fc.constantFrom('d', 'D', NFD_E, ' ', '#'))
  .map(([depth, name]) => `${Array.from({ length: depth }, (_, i) => `${name}${i}`).join('/')}/x.txt`)

/** A path of exactly `bytes` bytes of UTF-8 (up to SITE_PATH_MAX_BYTES), in names of at most 200 bytes. */
const longPathArbitrary = fc
  .tuple(
    fc.oneof(
      fc.constant(SITE_PATH_MAX_BYTES),
      fc.constant(SITE_PATH_MAX_BYTES - 1),
      fc.integer({ min: 256, max: SITE_PATH_MAX_BYTES }),
    ),
    fc.constantFrom(...FILLERS),
  )
  .map(([bytes, filler]) => pathOfBytes(bytes, filler))

function pathOfBytes(bytes: number, filler: string): string {
  const segments: string[] = []
  let left = bytes - byteLength('.txt')
  while (left > 0) {
    const room = Math.min(200, left === 201 ? 199 : left)
    let name = ''
    while (byteLength(name + filler) <= room) name += filler
    name += 'a'.repeat(room - byteLength(name))
    segments.push(name)
    left -= room + 1
  }
  return `${segments.join('/')}.txt`
}

const fileArbitrary = (hidden: boolean) =>
  fc.record({
    path: fc.oneof(
      { weight: 8, arbitrary: shortPathArbitrary(hidden) },
      { weight: 1, arbitrary: deepPathArbitrary },
      { weight: 1, arbitrary: longPathArbitrary },
    ),
    size: sizeArbitrary,
    seed: fc.integer({ min: 0, max: 3 }),
    /** The same path in the other case, the other normal form, or with another's content too. */
    twin: fc.constantFrom('none', 'none', 'upper', 'lower', 'nfd', 'nfc', 'copy'),
  })

export function buildArbitrary(maxFiles = 12): fc.Arbitrary<Build> {
  return fc.boolean().chain((includeHidden) =>
    fc
      .record({
        index: fc.record({ size: sizeArbitrary, seed: fc.integer({ min: 0, max: 3 }) }),
        others: fc.array(fileArbitrary(includeHidden), { maxLength: maxFiles }),
      })
      .map(({ index, others }) => {
        const files: BuildFile[] = [{ path: 'index.html', ...index }]
        for (const { twin, ...file } of others) {
          files.push(file)
          const other = twinOf(file, twin)
          if (other) files.push(other)
        }
        return withToString({ files: consistent(files), includeHidden })
      }),
  )
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
 * The files that can be written together: no path twice, none that is also another's folder, none
 * over the service's limit, none hidden unless asked (a case mapping can change that), none at the
 * record's path.
 */
function consistent(files: readonly BuildFile[]): BuildFile[] {
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
      /^\.(git|well-known)(\/|$)/i.test(file.path)
    ) {
      continue
    }
    kept.push(file)
    paths.add(file.path)
    for (const parent of parents) folders.add(parent)
  }
  return kept
}

/** A path quoted, non-ASCII as \\u escapes: its NFC and NFD forms look the same otherwise. */
export const showPath = (text: string) =>
  JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

function withToString(build: Build): Build {
  const shown = build.files.map((f) => `{ path: ${showPath(f.path)}, size: ${f.size}, seed: ${f.seed} }`)
  const text = `{ includeHidden: ${build.includeHidden}, files: [\n  ${shown.join(',\n  ')}\n] }`
  return Object.assign(build, { [fc.toStringMethod]: () => text })
}

/** The bytes of a file: the same for the same size and seed, different at every offset of a part. */
export function contentOf(file: Pick<BuildFile, 'size' | 'seed'>): Buffer {
  const bytes = Buffer.alloc(file.size)
  let block = Buffer.alloc(0)
  for (let offset = 0; offset < file.size; offset += 32) {
    block = hash('sha256', Buffer.concat([block, Buffer.from([file.seed])]), 'buffer')
    block.copy(bytes, offset)
  }
  return bytes
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
