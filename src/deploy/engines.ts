// The engines the deploy knows, in one table: what marks each one's web build, the files it is made
// of and their compressed forms, and how the rest of the deploy treats those files (seen-live fetches
// an engine's files, the size report always shows its heavy ones). A new engine is added here; how
// its build is served is planned in web-engine.ts from these marks.

export type EngineName = 'unity' | 'godot'
export type Encoding = 'br' | 'gzip'

/** A file of an engine's build, by the end of its name once its compression is taken off. */
export interface EngineFile {
  ending: string
  engines: readonly EngineName[]
  /** What a player downloads the most of: always a row of the size report. */
  heavy: boolean
  /**
   * A part of a Unity build beside its loader: `modern` beside a 2020+ `<name>.loader.js`, `legacy`
   * (2019) beside UnityLoader.js. A compressed part is the build's evidence when web-engine is unity.
   */
  unityPart?: 'modern' | 'legacy'
}

/** Longest ending first: a name is the first kind whose ending it has. */
export const ENGINE_FILES: readonly EngineFile[] = [
  { ending: '.wasm.framework', engines: ['unity'], heavy: false, unityPart: 'legacy' },
  { ending: '.framework.js', engines: ['unity'], heavy: false, unityPart: 'modern' },
  { ending: '.wasm.code', engines: ['unity'], heavy: true, unityPart: 'legacy' },
  { ending: '.loader.js', engines: ['unity'], heavy: false },
  { ending: '.wasm', engines: ['unity', 'godot'], heavy: true, unityPart: 'modern' },
  { ending: '.data', engines: ['unity'], heavy: true, unityPart: 'modern' },
  { ending: '.pck', engines: ['godot'], heavy: true },
  { ending: '.js', engines: ['godot'], heavy: false },
]

/**
 * The compressed forms of an engine's files, by suffix, and the Content-Encoding each is served
 * with; a `.unityweb` file's compression is told by its first bytes (see UNITY.unityweb).
 */
export const COMPRESSIONS: ReadonlyArray<{ suffix: string; encoding: Encoding | 'first-bytes' }> = [
  { suffix: '.br', encoding: 'br' },
  { suffix: '.gz', encoding: 'gzip' },
  { suffix: '.unityweb', encoding: 'first-bytes' },
]

export const ENCODING_NAMES: Record<Encoding, string> = { br: 'Brotli', gzip: 'gzip' }

/** What marks a Unity WebGL build. */
export const UNITY = {
  title: 'Unity WebGL build',
  /** 2020 and later: `<name>.loader.js` beside `<name>.wasm`, `.framework.js`, `.data`. */
  loaderEnding: '.loader.js',
  /** 2019 and before: UnityLoader.js beside `.unityweb` files or a build `.json`. */
  legacyLoader: 'UnityLoader.js',
  legacyCompanions: ['.unityweb', '.json'],
  /** How Unity's loader tells a `.unityweb` file's compression from its first bytes. */
  unityweb: {
    bytes: 64,
    gzipMagic: [0x1f, 0x8b],
    brotliMarker: 'UnityWeb Compressed Content (brotli)',
  },
  missing: `no <name>.loader.js (or UnityLoader.js) beside its .wasm, .framework.js and .data files. Give the folder Unity built into`,
} as const

/**
 * What marks a Godot web export: `<name>.pck` (or a `<name>.asyncpck` folder) beside `<name>.wasm` and
 * `<name>.js`. Godot 4.3 and later write `const GODOT_THREADS_ENABLED = true|false;` into the exported
 * HTML (export_plugin.cpp, from `variant/thread_support`), and `"ensureCrossOriginIsolationHeaders"`
 * and `"serviceWorker"` into its GODOT_CONFIG; 4.0 to 4.2 (always threaded) and a Godot 3 threads
 * export ship an emscripten `<name>.worker.js`.
 */
export const GODOT = {
  title: 'Godot web export',
  pack: '.pck',
  asyncPack: '.asyncpck',
  threadsWorker: '.worker.js',
  configMarker: 'GODOT_CONFIG',
  threadsConstant: /\bGODOT_THREADS_ENABLED\s*=\s*(true|false)\b/,
  serviceWorker: /"serviceWorker"\s*:\s*"([^"]+)"/,
  ensuresIsolation: /"ensureCrossOriginIsolationHeaders"\s*:\s*true/,
  /** How much of an HTML page is read to find the marks above. */
  htmlBytes: 2 * 1024 * 1024,
  missing:
    'no <name>.pck (or <name>.asyncpck) beside <name>.wasm and <name>.js. Give the folder Godot exported into',
} as const

/** Each engine's marks, by the name the `web-engine` input gives it. */
export const ENGINES: Record<EngineName, { title: string; missing: string }> = { unity: UNITY, godot: GODOT }

/** The compression of a file by its suffix (names are matched as the CDN's globs match them: case counts) (undefined: none), and its name without it. */
export function compressionOf(name: string): {
  inner: string
  suffix?: string
  encoding?: Encoding | 'first-bytes'
} {
  const found = COMPRESSIONS.find(({ suffix }) => name.endsWith(suffix))
  return found
    ? { inner: name.slice(0, -found.suffix.length), suffix: found.suffix, encoding: found.encoding }
    : { inner: name }
}

/** The kind of engine file `path` is, compressed or not; a `.unityweb` file is one whatever is inside. */
export function engineFileOf(path: string): EngineFile | undefined {
  const { inner, suffix } = compressionOf(path)
  const kind = ENGINE_FILES.find(({ ending }) => inner.endsWith(ending))
  if (kind || suffix !== '.unityweb') return kind
  return { ending: '.unityweb', engines: ['unity'], heavy: false }
}

/** A file seen-live fetches whole when it is in a build's folder: the build cannot start without it. */
export const isEngineFile = (path: string) => engineFileOf(path) !== undefined

/** A file the size report always shows (whatever the case of its name): what a player downloads the most of. */
export const isHeavyEngineFile = (path: string) => engineFileOf(path.toLowerCase())?.heavy === true

/** A part of a Unity build (see EngineFile.unityPart), compressed or not. */
export function unityPartOf(name: string): EngineFile['unityPart'] {
  const { inner } = compressionOf(name)
  return ENGINE_FILES.find(({ ending }) => inner.endsWith(ending))?.unityPart
}

/** A compressed part of a Unity build, the evidence when `web-engine` is unity. */
export const isCompressedUnityPart = (name: string) =>
  compressionOf(name).suffix !== undefined && unityPartOf(name) !== undefined

/**
 * Whether the file at `path` can make its folder a build's: a Unity loader, a Godot pack, or when
 * unity is named, a compressed part. No engine is recognised in a folder without one.
 */
export function isBuildEvidence(path: string, unityNamed: boolean): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1)
  return (
    name.endsWith(UNITY.loaderEnding) ||
    name === UNITY.legacyLoader ||
    name.endsWith(GODOT.pack) ||
    (unityNamed && isCompressedUnityPart(name))
  )
}
