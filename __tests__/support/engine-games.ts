// Test games shaped as Unity's and Godot's web builds are where the smoke test hears them: a Unity
// template that loads Build/<name>.loader.js and calls the createUnityInstance it declares, and a
// Godot page whose <name>.js makes its Engine as Godot's engine.js does (a const, each instance made by
// a fresh prototype's constructor that sets this.rtenv = null) and calls engine.startGame. Each draws
// with WebGL2 only once its promise resolves, after `delayMs`; it rejects with `rejects`, or never
// settles with `never`.
import type { Handler } from './smoke-page.ts'

export interface EngineGameOptions {
  delayMs?: number
  rejects?: string
  never?: boolean
  /** The context it draws with (default webgl2). */
  context?: 'webgl2' | '2d'
}

/** Draws two colours every frame on the canvas, with WebGL2 (an Error when there is none) or 2D. */
const draw = (context: string) => `function drawOn(canvas) {
  if (${JSON.stringify(context)} === '2d') {
    const c = canvas.getContext('2d')
    const frame = () => { c.fillStyle = '#102030'; c.fillRect(0, 0, 320, 200); c.fillStyle = '#ff8800'; c.fillRect(40, 40, 100, 100); requestAnimationFrame(frame) }
    return frame()
  }
  const gl = canvas.getContext('webgl2')
  if (!gl) throw new Error('no WebGL2 context: getContext("webgl2") is null')
  const frame = () => {
    gl.disable(gl.SCISSOR_TEST)
    gl.clearColor(0.06, 0.12, 0.19, 1)
    gl.clear(gl.COLOR_BUFFER_BIT)
    gl.enable(gl.SCISSOR_TEST)
    gl.scissor(40, 40, 100, 100)
    gl.clearColor(1, 0.53, 0, 1)
    gl.clear(gl.COLOR_BUFFER_BIT)
    requestAnimationFrame(frame)
  }
  frame()
}`

/** A page that draws with WebGL2 alone, and throws when getContext('webgl2') is null. */
export const webgl2Page = `<!DOCTYPE html><body style="margin: 0; background: #fff">
<canvas width="320" height="200"></canvas>
<script>
${draw('webgl2')}
drawOn(document.querySelector('canvas'))
</script></body>`

/** After delayMs: rejected (Unity's loader with a string, Godot's with an Error), never settled, or drawn and resolved. */
const settle = (options: EngineGameOptions, drawn: string, error = (message: string) => message) =>
  options.never
    ? 'new Promise(() => {})'
    : `new Promise((resolve, reject) => setTimeout(() => {
    ${options.rejects === undefined ? '' : `return reject(${error(JSON.stringify(options.rejects))})`}
    ${drawn}
    resolve({})
  }, ${options.delayMs ?? 200}))`

export const javascript =
  (text: string): Handler =>
  (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/javascript' })
    response.end(text)
  }

/** A Unity WebGL build's page and loader, under `base` ("/unity/"). */
export function unityGame(base: string, options: EngineGameOptions = {}): Record<string, string | Handler> {
  const loader = `${draw(options.context ?? 'webgl2')}
function createUnityInstance(canvas, config, onProgress) {
  return ${settle(options, 'drawOn(canvas)')}
}`
  const page = `<!DOCTYPE html><body style="margin: 0; background: #fff">
<canvas id="unity-canvas" width="320" height="200"></canvas>
<script>
const script = document.createElement('script')
script.src = 'Build/game.loader.js'
script.onload = () => {
  createUnityInstance(document.querySelector('#unity-canvas'), { dataUrl: 'Build/game.data' }, () => {})
    .catch((message) => alert(message))
}
document.body.appendChild(script)
</script></body>`
  return { [base]: page, [`${base}Build/game.loader.js`]: javascript(loader) }
}

/** A Godot web export's page and engine script, under `base` ("/godot/"). */
export function godotGame(base: string, options: EngineGameOptions = {}): Record<string, string | Handler> {
  const engine = `${draw(options.context ?? 'webgl2')}
const Engine = (function () {
  let initPromise = null
  function Engine(initConfig) {
    this.config = initConfig
    this.rtenv = null
  }
  function SafeEngine(initConfig) {
    const proto = {
      init: function () {
        if (!initPromise) initPromise = ${settle(options, '', (message) => `new Error(${message})`)}
        return initPromise
      },
      start: function () {
        const me = this
        return me.init().then(() => new Promise((resolve) => {
          me.rtenv = {}
          drawOn(document.getElementById('canvas'))
          resolve()
        }))
      },
      startGame: function () {
        const me = this
        return Promise.all([this.init()]).then(() => me.start.apply(me))
      },
    }
    Engine.prototype = proto
    return new Engine(initConfig)
  }
  return SafeEngine
}())
if (typeof window !== 'undefined') {
  window['Engine'] = Engine
}`
  const page = `<!DOCTYPE html><body style="margin: 0; background: #fff">
<canvas id="canvas" width="320" height="200"></canvas>
<script src="game.js"></script>
<script>
const GODOT_CONFIG = { executable: 'game' }
const engine = new Engine(GODOT_CONFIG)
engine.startGame({}).then(() => {}, (error) => console.warn('Godot could not start', error))
</script></body>`
  return { [base]: page, [`${base}game.js`]: javascript(engine) }
}
