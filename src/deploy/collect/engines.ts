// The engines the deploy knows, in one table: what marks each one's web build, its files and their
// compressed forms, which seen-live fetches and the size report always shows. A new engine is added
// here (and its planner in web-engine.ts).

export type EngineName = 'unity' | 'godot'
export type Encoding = 'br' | 'gzip'

interface EngineFile {
  /** Of the name once its compression is taken off. */
  ending: string
  engines: readonly EngineName[]
  /** What a player downloads the most of: always a row of the size report. */
  heavy: boolean
  /** `modern` beside a 2020+ `<name>.loader.js`, `legacy` (2019) beside UnityLoader.js. */
  unityPart?: 'modern' | 'legacy'
}

/** WebAssembly: a browser compiles it as it streams only when it comes as application/wasm. */
const WASM = '.wasm'
const UNITYWEB = '.unityweb'

/** Longest ending first: a name is the first kind whose ending it has. */
export const ENGINE_FILES: readonly EngineFile[] = [
  { ending: '.wasm.framework', engines: ['unity'], heavy: false, unityPart: 'legacy' },
  { ending: '.framework.js', engines: ['unity'], heavy: false, unityPart: 'modern' },
  { ending: '.wasm.code', engines: ['unity'], heavy: true, unityPart: 'legacy' },
  { ending: '.loader.js', engines: ['unity'], heavy: false },
  { ending: WASM, engines: ['unity', 'godot'], heavy: true, unityPart: 'modern' },
  { ending: '.data', engines: ['unity'], heavy: true, unityPart: 'modern' },
  { ending: '.pck', engines: ['godot'], heavy: true },
  { ending: '.js', engines: ['godot'], heavy: false },
]

/** The Content-Encoding each suffix is served with; a `.unityweb` file's is told by its first bytes. */
export const COMPRESSIONS: ReadonlyArray<{ suffix: string; encoding: Encoding | 'first-bytes' }> = [
  { suffix: '.br', encoding: 'br' },
  { suffix: '.gz', encoding: 'gzip' },
  { suffix: UNITYWEB, encoding: 'first-bytes' },
]

export const ENCODING_NAMES: Record<Encoding, string> = { br: 'Brotli', gzip: 'gzip' }

export const UNITY = {
  name: 'Unity',
  title: 'Unity WebGL build',
  /** 2020 and later: `<name>.loader.js` beside `<name>.wasm`, `.framework.js`, `.data`. */
  loaderEnding: '.loader.js',
  /** 2019 and before: UnityLoader.js beside `.unityweb` files or a build `.json`. */
  legacyLoader: 'UnityLoader.js',
  legacyCompanions: [UNITYWEB, '.json'],
  /** How Unity's loader tells a `.unityweb` file's compression from its first bytes. */
  unityweb: {
    ending: UNITYWEB,
    bytes: 64,
    gzipMagic: [0x1f, 0x8b],
    brotliMarker: 'UnityWeb Compressed Content (brotli)',
  },
  missing: `no <name>.loader.js (or UnityLoader.js) beside its .wasm, .framework.js and .data files. Give the folder Unity built into`,
} as const

/**
 * `<name>.pck` (or `<name>.asyncpck/`) beside `<name>.wasm` and `<name>.js`. Godot 4.3+ write
 * GODOT_THREADS_ENABLED into the HTML (export_plugin.cpp) and the isolation and service worker
 * options into GODOT_CONFIG; 4.0 to 4.2 (always threaded) and Godot 3 threads ship a `.worker.js`.
 */
export const GODOT = {
  name: 'Godot',
  title: 'Godot web export',
  pack: '.pck',
  /** Beside `<name>.pck`, named `<name>` too. */
  companions: [WASM, '.js'],
  page: '.html',
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

/**
 * How each engine's page says its game started (smoke/in-page-start.ts wraps it before the page's
 * scripts run). Unity 2020+: the promise of the global createUnityInstance its loader declares. Godot:
 * the promise of an Engine instance's startGame or start; Engine is a `const` out of reach, so each
 * instance is caught as its constructor sets `this.rtenv = null`, its methods already on its prototype
 * (the engine.js of Godot 4, and of Godot 3 once its methods moved to Engine.prototype).
 */
export const ENGINE_STARTS = {
  unity: { global: 'createUnityInstance' },
  godot: { instanceMark: 'rtenv', methods: ['startGame', 'start'], callPrefix: 'engine.' },
} as const

export const ENGINES: Record<EngineName, { name: string; title: string; missing: string }> = {
  unity: UNITY,
  godot: GODOT,
}

/** By suffix, case counting as in the CDN's globs; `inner`: the name without it. */
export function compressionOf(name: string) {
  const found = COMPRESSIONS.find(({ suffix }) => name.endsWith(suffix))
  return {
    inner: found ? name.slice(0, -found.suffix.length) : name,
    suffix: found?.suffix,
    encoding: found?.encoding,
  }
}

/** A `.unityweb` file is one whatever is inside. */
const UNITYWEB_FILE: EngineFile = { ending: UNITYWEB, engines: ['unity'], heavy: false }

export function engineFileOf(path: string): EngineFile | undefined {
  const { inner, suffix } = compressionOf(path)
  const kind = ENGINE_FILES.find(({ ending }) => inner.endsWith(ending))
  return kind || suffix !== UNITYWEB ? kind : UNITYWEB_FILE
}

/** Seen-live checks it wherever it is: its content type decides whether it starts. */
export const isWasm = (path: string) => path.endsWith(WASM)

/** Seen-live fetches it whole in a build's folder: the build cannot start without it. */
export const isEngineFile = (path: string) => engineFileOf(path) !== undefined

export const isHeavyEngineFile = (path: string) => engineFileOf(path.toLowerCase())?.heavy === true

/** The evidence when `web-engine` is unity. */
export const isCompressedUnityPart = (name: string) =>
  compressionOf(name).suffix !== undefined && engineFileOf(name)?.unityPart !== undefined

/** No engine is recognised in a folder without a file this says yes to. */
export function isBuildEvidence(path: string, unityNamed: boolean): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1)
  return (
    name.endsWith(UNITY.loaderEnding) ||
    name === UNITY.legacyLoader ||
    name.endsWith(GODOT.pack) ||
    (unityNamed && isCompressedUnityPart(name))
  )
}
