// What the watch of the page (watch.ts) comes to: passed or failed in one line, the first problem in
// words and what a user can do about it.

import { formatBytes, formatSeconds, plural } from '../../common/format.ts'
import { inputName } from '../../common/input-naming.ts'
import { Input } from '../../inputs/constants.ts'
import { COMPRESSIONS, ENGINES } from '../collect/engines.ts'
import type { StartSeen } from './engine-start.ts'
import type { CanvasSeen } from './in-page.ts'
import type { Problem, Seen } from './watch.ts'

export type SmokeStatus = 'passed' | 'failed' | 'skipped'

/** What the smoke test saw, for the outputs, the log, the summary and the comment. */
export interface SmokeResult {
  status: SmokeStatus
  /** "started in Chromium 156 in 0.4 s: 0 errors, 5 requests answered, the canvas drew". */
  line: string
  problem?: string
  remedy?: string
  screenshot?: string
  /** "the page left the deployed URL", "no problem seen, and the canvas drew (screenshot)". */
  decidedBy?: string
  rolledBackTo?: string
}

/** What makes an engine's start fail, rather than what it says after. */
const CAUSES: ReadonlySet<Problem['kind']> = new Set(['request', 'exception', 'load'])

/** The verdict on what was seen: any problem, or a canvas of one flat colour, fails. */
export function judge(seen: Seen, watchMs: number): SmokeResult {
  const { problems, canvas } = seen
  const failedRequests = problems.count('request')
  const notStarted = startProblem(seen.started)
  const errors = problems.count() - failedRequests + (notStarted ? 1 : 0)
  // Judged on what shows in the screenshot: a page of one colour painted nothing, and a canvas
  // under a loading bar is what is left of it in sight.
  const blank = seen.painted !== undefined && seen.painted.colours <= 1
  const flat = blank || (canvas !== undefined && canvas.colours <= 1)
  const counts = [
    plural(errors, 'error'),
    plural(seen.answered, 'request') + ' answered',
    ...(failedRequests ? [plural(failedRequests, 'request') + ' failed'] : []),
    ...refusedCount(seen),
  ]
  const drew = blank
    ? `the page one flat colour (${seen.painted!.first})`
    : !canvas
      ? seen.screenshot
        ? 'no canvas on the page'
        : 'no screenshot'
      : canvas.colours === 0
        ? 'the canvas covered by the page'
        : flat
          ? `the canvas one flat colour (${canvas.first})`
          : `the canvas drew${webglOf(seen.started)}`
  const { screenshot } = seen
  // The page froze, crashed, the browser went away, or the page left: what decided, whatever came before.
  // An engine that did not start says so after its cause (a file refused, a script that threw): the
  // cause first, where one was seen, else the engine's word.
  const first =
    problems.kept.find((p) => p.kind === 'browser') ??
    problems.kept.find((p) => p.kind === 'left') ??
    (notStarted && problems.kept.find((p) => CAUSES.has(p.kind))) ??
    notStarted ??
    problems.kept[0]
  if (!first && !flat) {
    const when = seen.loadMs === undefined ? '' : ` in ${formatSeconds(seen.loadMs)}`
    const said = engineSaid(seen.started)
    return {
      status: 'passed',
      line: `the game started in ${seen.browser}${when}: ${said ? `${said}, ` : ''}${counts.join(', ')}, ${drew}`,
      decidedBy: `${said ? `${said}, ` : ''}no problem seen, and ${canvas ? 'the canvas drew' : 'the page painted'} (screenshot)`,
      screenshot,
    }
  }
  const problem = first ? describeProblem(first) : nothingDrawn(seen, blank, watchMs)
  return {
    status: 'failed',
    line: `the game did not start in ${seen.browser}: ${counts.join(', ')}, ${drew}; first: ${problem}`,
    problem,
    decidedBy: first ? signalOf(first) : drawnSignal(blank, canvas),
    remedy: remedyFor(notStarted ? [...problems.kept, notStarted] : problems.kept, first, watchMs),
    screenshot,
  }
}

function signalOf(problem: Problem): string {
  switch (problem.kind) {
    case 'browser':
      return 'the page or the browser stopped answering'
    case 'left':
      return 'the page left the deployed URL'
    case 'request':
      if (problem.stalled) return 'a request not ended when the watch ended'
      return problem.status !== undefined ? 'a request answered with an error' : 'a request that failed'
    case 'exception':
      return 'an uncaught exception'
    case 'console':
      return 'a console.error'
    case 'alert':
      return 'an alert'
    case 'engine':
      return `${ENGINES[problem.engine].name}'s report on the page`
    case 'load':
      return 'the page did not load'
    case 'start':
      return `${ENGINES[problem.engine].name}'s start: ${START_SIGNALS[problem.why]}`
  }
}

const START_SIGNALS = {
  rejected: 'its promise rejected',
  pending: 'its promise not resolved within the watch',
  'no-webgl': 'no WebGL context created',
} as const

/** "Unity said it started (createUnityInstance resolved at 2.6 s, WebGL2)"; undefined without an engine's word. */
function engineSaid(started: StartSeen | undefined): string | undefined {
  const engine = started?.engine
  if (engine?.resolvedMs === undefined) return undefined
  const webgl = webglOf(started).replace(/^ \((.*)\)$/, ', $1')
  return `${ENGINES[engine.engine].name} said it started (${engine.call} resolved at ${formatSeconds(engine.resolvedMs)}${webgl})`
}

/** " (WebGL2)" when the page created a WebGL context; "" when it created none. */
function webglOf(started: StartSeen | undefined): string {
  const created = started?.webgl.created ?? []
  const kind = created.includes('webgl2') ? 'WebGL2' : created.length ? 'WebGL' : undefined
  return kind ? ` (${kind})` : ''
}

/** Its start promise rejected, had not resolved when the watch ended, or resolved without WebGL. */
function startProblem(started: StartSeen | undefined): Problem | undefined {
  const engine = started?.engine
  if (!engine) return undefined
  const name = ENGINES[engine.engine].name
  const problem = (why: keyof typeof START_SIGNALS, message: string): Problem => ({
    kind: 'start',
    engine: engine.engine,
    why,
    message,
  })
  if (engine.rejected !== undefined)
    return problem('rejected', `${name} did not start: ${engine.call} rejected (${engine.rejected})`)
  if (engine.resolvedMs === undefined)
    return problem(
      'pending',
      `${name} did not say it started: ${engine.call} had not resolved when the watch ended`,
    )
  const { webgl } = started
  if (webgl.created.length) return undefined
  const refused = webgl.refused.length ? ` (${webgl.refused.join(', ')} refused)` : ''
  return problem(
    'no-webgl',
    `${name} said it started (${engine.call} resolved), but no WebGL context was created${refused}`,
  )
}

function drawnSignal(blank: boolean, canvas: CanvasSeen | undefined): string {
  if (blank) return 'the screenshot: the page one flat colour'
  if (canvas?.colours === 0) return 'the screenshot: the canvas covered'
  return 'the screenshot: the canvas one flat colour where it shows'
}

function nothingDrawn(seen: Seen, blank: boolean, watchMs: number): string {
  const after = `${formatSeconds(watchMs)} after the page loaded: the game drew nothing`
  if (blank) return `the page shows one flat colour (${seen.painted!.first}) ${after}`
  const canvas = seen.canvas!
  if (canvas.colours === 0)
    return `the canvas (${canvas.width}×${canvas.height}) is covered by the page's own elements (a loading bar, a splash) ${after}`
  return `the canvas (${canvas.width}×${canvas.height}) shows one flat colour (${canvas.first}) where it is seen ${after}`
}

/** The page's connections to the runner's own network, refused (not a failure of the game by itself). */
function refusedCount(seen: Seen): string[] {
  if (!seen.refused?.count) return []
  const named = seen.refused.named.map((r) => `${r.destination} ${r.range}`)
  const more = seen.refused.destinations > named.length ? ', …' : ''
  return [
    `${plural(seen.refused.count, 'connection')} to the runner's network refused (${named.join(', ')}${more})`,
  ]
}

function describeProblem(problem: Problem): string {
  switch (problem.kind) {
    case 'exception':
      return `uncaught ${problem.message}`
    case 'console':
      return `console.error: ${problem.message}${problem.url ? ` (${problem.url})` : ''}`
    case 'request':
      if (problem.stalled) {
        const { bytes, total, ms } = problem.stalled
        const of = total === undefined ? '' : ` of ${formatBytes(total)}`
        return `${problem.url} had not ended when the watch ended: ${formatBytes(bytes)}${of} arrived in ${formatSeconds(ms)}`
      }
      return problem.status !== undefined
        ? `${problem.url} answered ${problem.status}`
        : `${problem.url} could not be fetched (${problem.failure})`
    case 'alert':
      return `the page alerted: ${problem.message}`
    case 'engine':
      return `${ENGINES[problem.engine].name} reported: ${problem.message}`
    case 'load':
      return `the page did not load: ${problem.message}`
    case 'browser':
      return problem.message
    case 'left':
      return `the page left the deployed URL for ${problem.url}`
    case 'start':
      return problem.message
  }
}

const SUFFIXES = COMPRESSIONS.map(({ suffix }) => suffix.slice(1)).join('|')
/**
 * A compressed file read as what is inside it: a SyntaxError in a compressed script (.gz, .br,
 * .unityweb), a .wasm that starts with gzip's magic bytes, or Unity's loader saying so.
 */
const COMPRESSED = new RegExp(
  `SyntaxError.*\\.(${SUFFIXES}):\\d|found 1f 8b|Content-Encoding|Unable to parse .*\\.(${SUFFIXES})`,
  'i',
)
const WASM_TYPE = /Incorrect response MIME type\. Expected 'application\/wasm'/
const ISOLATION = /SharedArrayBuffer|cross-origin isolat|crossOriginIsolated/i

/** What a user can do: about the first problem, with the engines' causes the others reveal. */
function remedyFor(problems: readonly Problem[], first: Problem | undefined, watchMs: number): string {
  if (!first)
    return `if the game takes longer than ${formatSeconds(watchMs)} to draw, raise ${inputName(Input.SmokeTestSeconds)}; else find why it draws nothing (its console, in a browser)`
  if (first.kind === 'request' && first.stalled)
    return `the host stalled on it, or the game waits on a request that never ends: open the URL in a browser and watch its network panel; if the file is only slow, raise ${inputName(Input.SmokeTestSeconds)}`
  if (first.kind === 'request') return requestRemedy(first.status)
  if (first.kind === 'start' && first.why === 'pending')
    return `if the game takes longer than ${formatSeconds(2 * watchMs)} after its page loaded to start, raise ${inputName(Input.SmokeTestSeconds)}; else open the URL in a browser and watch its console and network panel`
  if (first.kind === 'start' && first.why === 'no-webgl')
    return "the game ran without WebGL: check that it starts in a browser without a GPU (the smoke test's Chrome renders WebGL in software, with SwiftShader)"
  const said = problems
    .filter((p) => p.kind !== 'request')
    .map(describeProblem)
    .join('\n')
  if (COMPRESSED.test(said))
    return (
      'a compressed file reached the browser without its Content-Encoding, so it could not be read: keep ' +
      `${inputName(Input.WebEngine)} auto (or unity) so that the version's routes send it, and no ${inputName(Input.Headers)} rule ` +
      "overriding them; or build without compression (Unity: Publishing Settings, Compression Format 'Disabled')"
    )
  if (WASM_TYPE.test(said))
    return (
      `a .wasm came without Content-Type application/wasm, which the browser needs to compile it as it streams: keep ` +
      `${inputName(Input.WebEngine)} auto (or unity, godot), which sets it for the engine's files`
    )
  if (ISOLATION.test(said))
    return (
      'a Godot export with thread support needs the page cross-origin isolated, which this CDN cannot send: export ' +
      "without threads, or as a Progressive Web App with 'Ensure Cross Origin Isolation Headers'"
    )
  if (first.kind === 'browser')
    return 'open the URL in a browser and watch its main thread (the performance panel) and its memory: a re-run checks again'
  if (first.kind === 'left')
    return 'find what sends the page away (a redirect of its script, a link followed, a frame-busting script): the game must run at the deployed URL'
  if (first.kind === 'load') return 'check that the URL opens in a browser; a re-run checks again'
  return "fix the error it names, and check that the game runs from this URL (an absolute path, another host's origin)"
}

function requestRemedy(status: number | undefined): string {
  if (status === 404)
    return (
      `the page asks for a file the site does not have: check that the ${inputName(Input.Files)} patterns select it ` +
      `(and ${inputName(Input.IncludeHidden)} for a name starting with '.'), and the case of its path`
    )
  if (status === 401 || status === 403)
    return `the host refused the request: on a private namespace, check ${inputName(Input.BasicAuth)}`
  if (status !== undefined && status >= 500) return 'the host failed to answer: a re-run checks again'
  if (status !== undefined)
    return 'the host refused the request the page made: check the URL the game builds for it'
  return 'the browser could not fetch it: a file from another host, or an address the game makes for this one'
}

/** Here, not in index.ts: the reports that name it never load the browser's driver. */
export class SmokeTestError extends Error {
  override name = 'SmokeTestError'
  readonly smoke: SmokeResult
  constructor(message: string, smoke: SmokeResult, options?: ErrorOptions) {
    super(message, options)
    this.smoke = smoke
  }
}

/** "started in Chromium 156 in 0.4 s: …", and on failure what to do and what was put back. */
export function smokeSentence(smoke: SmokeResult): string {
  const parts = [smoke.line]
  if (smoke.remedy) parts.push(smoke.remedy)
  if (smoke.rolledBackTo) parts.push(`the namespace was put back on version ${smoke.rolledBackTo}`)
  return parts.join('; ')
}

export function smokeRerun(smoke: SmokeResult): string {
  const now = smoke.rolledBackTo
    ? `The namespace serves version ${smoke.rolledBackTo} again, as before this run. `
    : ''
  return `${now}A re-run publishes this build again and opens it again: fix what the smoke test found first.`
}
