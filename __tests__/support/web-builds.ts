// Web builds as their engines lay them out, made of file names and a few bytes (no engine needed):
// a Unity WebGL build (compressed with Brotli, gzip, as .unityweb, or not at all) and a Godot web
// export (with or without thread support, as a Progressive Web App or not). For writeTree.

import { brotliCompressSync, gzipSync } from 'node:zlib'

/** The bytes of a tiny WebAssembly module (the header alone), for a `.wasm` that is one. */
export const WASM_BYTES = Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00])

export type UnityCompression = 'br' | 'gz' | 'none' | 'unityweb-br' | 'unityweb-gzip' | 'legacy-unityweb'

/**
 * A Unity WebGL build: index.html and TemplateData at the root, the loader and the build's files in
 * `Build/` (Unity 2020+), or UnityLoader.js and `.unityweb` files (`legacy-unityweb`, Unity 2019).
 */
export function unityBuild(compression: UnityCompression, name = 'game'): Record<string, string | Buffer> {
  const files: Record<string, string | Buffer> = {
    'index.html': `<!DOCTYPE html><canvas id="unity-canvas"></canvas><script src="Build/${name}.loader.js"></script>`,
    'TemplateData/style.css': 'body { margin: 0 }',
  }
  const parts: Record<string, Buffer> = {
    [`${name}.framework.js`]: Buffer.from('function unityFramework(Module) {}'),
    [`${name}.wasm`]: WASM_BYTES,
    [`${name}.data`]: Buffer.from('UnityWebData1.0\0'),
  }
  if (compression === 'legacy-unityweb') {
    files['Build/UnityLoader.js'] = 'var UnityLoader = {}'
    files[`Build/${name}.json`] = JSON.stringify({ wasmCodeUrl: `${name}.wasm.code.unityweb` })
    files[`Build/${name}.wasm.code.unityweb`] = gzipSync(WASM_BYTES)
    files[`Build/${name}.wasm.framework.unityweb`] = gzipSync(parts[`${name}.framework.js`]!)
    files[`Build/${name}.data.unityweb`] = gzipSync(parts[`${name}.data`]!)
    return files
  }
  files[`Build/${name}.loader.js`] = 'function createUnityInstance() {}'
  for (const [part, bytes] of Object.entries(parts)) {
    if (compression === 'br') files[`Build/${part}.br`] = brotliCompressSync(bytes)
    else if (compression === 'gz') files[`Build/${part}.gz`] = gzipSync(bytes)
    else if (compression === 'unityweb-gzip') files[`Build/${part}.unityweb`] = gzipSync(bytes)
    else if (compression === 'unityweb-br') {
      // What Unity's loader looks for: its marker near the start of the Brotli stream.
      files[`Build/${part}.unityweb`] = Buffer.concat([
        Buffer.from([0x6b, 0x1d, 0x00]),
        Buffer.from('UnityWeb Compressed Content (brotli)', 'latin1'),
        brotliCompressSync(bytes),
      ])
    } else files[`Build/${part}`] = bytes
  }
  return files
}

export interface GodotOptions {
  /** true/false: Godot 4.3+ (the constant in the HTML); 'legacy': Godot 4.0-4.2 (no constant, a .worker.js). */
  threads: boolean | 'legacy'
  /** A Progressive Web App, its service worker ensuring the isolation headers or not. */
  pwa?: { ensureIsolation: boolean }
  name?: string
  folder?: string
}

/** A Godot 4 web export: `<name>.html` with its GODOT_CONFIG, `.js`, `.wasm`, `.pck` and the worklets. */
export function godotExport(options: GodotOptions): Record<string, string | Buffer> {
  const name = options.name ?? 'index'
  const at = (file: string) => (options.folder ? `${options.folder}/${file}` : file)
  const config: Record<string, unknown> = {
    args: [],
    canvasResizePolicy: 2,
    ensureCrossOriginIsolationHeaders: options.pwa?.ensureIsolation ?? true,
    executable: name,
    experimentalVK: false,
    fileSizes: { [`${name}.pck`]: 16, [`${name}.wasm`]: WASM_BYTES.length },
    focusCanvas: true,
    gdextensionLibs: [],
  }
  if (options.pwa) config['serviceWorker'] = `${name}.service.worker.js`
  const threadsLine =
    options.threads === 'legacy' ? '' : `const GODOT_THREADS_ENABLED = ${String(options.threads)};\n`
  const files: Record<string, string | Buffer> = {
    [at(`${name}.html`)]:
      `<!DOCTYPE html>\n<html lang="en">\n<head><title>Game</title></head>\n<body>\n<canvas id="canvas"></canvas>\n` +
      `<script src="${name}.js"></script>\n<script>\nconst GODOT_CONFIG = ${JSON.stringify(config)};\n${threadsLine}` +
      'const engine = new Engine(GODOT_CONFIG);\n</script>\n</body>\n</html>\n',
    [at(`${name}.js`)]: 'var Engine = (function () {})();',
    [at(`${name}.wasm`)]: WASM_BYTES,
    [at(`${name}.pck`)]: Buffer.from('GDPC\x02\x00\x00\x00\x04\x00\x00\x00\x03\x00\x00\x00', 'latin1'),
    [at(`${name}.audio.worklet.js`)]: 'class GodotProcessor {}',
    [at(`${name}.png`)]: Buffer.from([0x89, 0x50, 0x4e, 0x47]),
  }
  if (options.threads === 'legacy') files[at(`${name}.worker.js`)] = 'self.onmessage = () => {}'
  if (options.pwa) {
    files[at(`${name}.service.worker.js`)] =
      `const ENSURE_CROSSORIGIN_ISOLATION_HEADERS = ${String(options.pwa.ensureIsolation)};`
    files[at(`${name}.manifest.json`)] = '{}'
    files[at(`${name}.offline.html`)] = '<p>offline</p>'
  }
  return files
}
