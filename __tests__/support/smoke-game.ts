// A small game a browser can start, laid out as a gzip-compressed Unity WebGL build: a page and its
// template's banner, a loader that loads the framework (a script), streams and instantiates the .wasm
// (a real module, hand-written: it exports colour(), the colour the framework draws), fetches the data,
// and draws on the canvas with WebGL2, as Unity does. Its loader reports start-up errors to the page as
// Unity's does (a red banner in #unity-warning, an alert). For writeTree.

import { gzipSync } from 'node:zlib'

/** A WebAssembly module exporting `colour: () => i32`, which answers 0xff8800. */
export const COLOUR_WASM = Buffer.from([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // magic, version 1
  ...[0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f], // types: () -> i32
  ...[0x03, 0x02, 0x01, 0x00], // functions: one of type 0
  ...[0x07, 0x0a, 0x01, 0x06, ...Buffer.from('colour'), 0x00, 0x00], // export "colour" = function 0
  ...[0x0a, 0x09, 0x01, 0x07, 0x00, 0x41, 0x80, 0x90, 0xfe, 0x07, 0x0b], // body: i32.const 0xff8800, end
])

const PAGE = (extraScript: string) => `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Smoke game</title></head>
<body style="margin: 0; background: #ffffff">
<canvas id="unity-canvas" width="320" height="200"></canvas>
<div id="unity-warning"></div>
<script>
function unityShowBanner(message, type) {
  const div = document.createElement('div')
  div.textContent = message
  if (type === 'error') div.style = 'background: red; padding: 10px;'
  document.getElementById('unity-warning').appendChild(div)
}
</script>
${extraScript}<script src="Build/game.loader.js"></script>
<script>
createUnityInstance(document.querySelector('#unity-canvas'), {
  dataUrl: 'Build/game.data.gz',
  frameworkUrl: 'Build/game.framework.js.gz',
  codeUrl: 'Build/game.wasm.gz',
  showBanner: unityShowBanner,
}).catch((message) => alert(message))
</script>
</body>
</html>
`

const LOADER = `function createUnityInstance(canvas, config) {
  return new Promise((resolve, reject) => {
    const fail = (message) => {
      config.showBanner(message, 'error')
      reject(message)
    }
    const script = document.createElement('script')
    script.src = config.frameworkUrl
    script.onerror = () => fail('Unable to load ' + config.frameworkUrl)
    script.onload = () => {
      if (typeof unityFramework !== 'function')
        return fail('Unable to parse ' + config.frameworkUrl + '! The file is compressed: the server must send it with Content-Encoding: gzip')
      const data = fetch(config.dataUrl).then((answer) => {
        if (!answer.ok) throw new Error('Unable to download ' + config.dataUrl + ' (' + answer.status + ')')
        return answer.arrayBuffer()
      })
      Promise.all([WebAssembly.instantiateStreaming(fetch(config.codeUrl), {}), data])
        .then(([wasm, bytes]) => resolve(unityFramework({ canvas, colour: wasm.instance.exports.colour(), data: bytes })))
        .catch((error) => fail(String(error)))
    }
    document.body.appendChild(script)
  })
}
`

/** Draws as Unity's framework does, with WebGL2, every frame: the wasm's colour, and a bar as long as the data. */
const FRAMEWORK = `function unityFramework(Module) {
  const gl = Module.canvas.getContext('webgl2')
  if (!gl) throw new Error('WebGL 2.0 is not supported in this browser')
  const colour = (rgb) => [(rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255].map((c) => c / 255)
  const fill = (rgb, x, y, width, height) => {
    gl.scissor(x, Module.canvas.height - y - height, width, height)
    gl.clearColor(...colour(rgb), 1)
    gl.clear(gl.COLOR_BUFFER_BIT)
  }
  const frame = () => {
    gl.enable(gl.SCISSOR_TEST)
    fill(0x102030, 0, 0, Module.canvas.width, Module.canvas.height)
    fill(Module.colour, 40, 40, 160, 100)
    fill(0xffffff, 10, 180, Math.min(300, Module.data.byteLength * 4), 6)
    requestAnimationFrame(frame)
  }
  frame()
  return {}
}
`

export interface SmokeGameOptions {
  /** A script on the page that throws before the game starts. */
  throws?: boolean
  /** A page of another origin the game's page then navigates to. */
  leavesFor?: string
  /** A script on the page that logs one console.error of 3 MB (the game still starts). */
  loud?: boolean
}

/** The game's files, for writeTree. */
export function smokeGame(options: SmokeGameOptions = {}): Record<string, string | Buffer> {
  const files: Record<string, string | Buffer> = {
    'index.html': PAGE(
      (options.throws ? '<script src="TemplateData/boot.js"></script>\n' : '') +
        (options.leavesFor
          ? `<script>setTimeout(() => { location.href = '${options.leavesFor}' }, 50)</script>\n`
          : '') +
        (options.loud ? "<script>console.error('E'.repeat(3 * 1024 * 1024))</script>\n" : ''),
    ),
    'Build/game.loader.js': LOADER,
    'Build/game.framework.js.gz': gzipSync(FRAMEWORK),
    'Build/game.wasm.gz': gzipSync(COLOUR_WASM),
    'Build/game.data.gz': gzipSync(Buffer.from('UnityWebData1.0\0 a level of the smoke game')),
  }
  if (options.throws) files['TemplateData/boot.js'] = 'window.gameSettings.start()\n'
  return files
}
