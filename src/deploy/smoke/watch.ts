// Opens the URL in a headless Chrome (puppeteer-core, loaded only when a smoke test runs) and writes
// down what a player's browser would meet. It judges nothing (verdict.ts).

import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Browser, CDPSession, ConsoleMessage, HTTPRequest, HTTPResponse, Page } from 'puppeteer-core'
import { errorMessage } from '../../common/format.ts'
import { pollUntil } from '../../common/poll.ts'
import type { BasicAuth } from '../../inputs/basic-auth.ts'
import type { EngineName } from '../collect/engines.ts'
import { browserName } from './browser.ts'
import { destinationOf } from './addresses.ts'
import { startGuard, type Guard, type Refusal } from './guard.ts'
import { BROWSER_ANSWER_MS, BROWSER_CLOSE_MS, within } from '../../common/timeouts.ts'
import { endBrowser, stillAnswering, watchGone, type Gone } from './ending.ts'
import { followRequests, type Progress } from './pending.ts'
import { followStarts, type StartSeen } from './engine-start.ts'
import { launchBrowser } from './launch.ts'
import type { Sandbox } from './sandbox.ts'
import {
  countColours,
  engineReports,
  largestCanvas,
  type CanvasSeen,
  type EngineReport,
  type PageSeen,
} from './in-page.ts'
import { ProblemLog } from './problems.ts'

export type Problem =
  | { kind: 'exception'; message: string }
  | { kind: 'console'; message: string; url?: string }
  | {
      kind: 'request'
      url: string
      status?: number
      failure?: string
      /** Not ended when the watch ended. */
      stalled?: { bytes: number; total?: number; ms: number }
    }
  | { kind: 'alert'; message: string }
  | { kind: 'engine'; message: string; engine: EngineName }
  | { kind: 'load'; message: string }
  /** The page navigated away from the deployed URL's origin. */
  | { kind: 'left'; url: string }
  /** The page froze or crashed, or the browser stopped answering. */
  | { kind: 'browser'; message: string }
  /** Made by verdict.ts from Seen.started. */
  | { kind: 'start'; engine: EngineName; message: string; why: 'rejected' | 'pending' | 'no-webgl' }

export interface Seen {
  /** "Chromium 156". */
  browser: string
  /** From the navigation's start to the page's load event; undefined when it never loaded. */
  loadMs?: number
  problems: ProblemLog
  /** Requests answered with a status below 400. */
  answered: number
  /** The largest canvas, as the screenshot shows it. */
  canvas?: CanvasSeen
  /** Undefined before the watch's end. */
  started?: StartSeen
  painted?: PageSeen
  screenshot?: string
  sandbox?: Sandbox
  refused?: { count: number; named: Refusal[]; destinations: number }
}

export interface WatchOptions {
  browserPath: string
  url: string
  /** Given only to the namespace's own origin. */
  basicAuth?: BasicAuth
  /** How long to watch after the load event (and until no request is in flight). */
  watchMs: number
  loadTimeoutMs: number
  screenshotFile: string
  signal: AbortSignal
  now: () => number
  /** Hears of what is seen as soon as the watch starts writing it down. */
  onSeen?: (seen: Seen) => void
}

export async function watchPage(options: WatchOptions): Promise<Seen> {
  const guard = await startGuard({ own: destinationOf(new URL(options.url)) })
  try {
    const { browser, sandbox } = await launchBrowser({
      browserPath: options.browserPath,
      timeoutMs: options.loadTimeoutMs,
      proxy: guard.proxy,
    })
    let gone: Gone | undefined
    try {
      const session = await within(browser.target().createCDPSession(), BROWSER_ANSWER_MS, 'the browser')
      gone = watchGone(browser, session, { now: options.now })
      const seen: Seen = {
        browser: browserName(
          options.browserPath,
          await within(browser.version(), BROWSER_ANSWER_MS, 'the browser'),
        ),
        problems: new ProblemLog(),
        answered: 0,
        sandbox,
      }
      options.onSeen?.(seen)
      await watchIn({ browser, session, gone }, seen, guard, options)
      seen.refused = { count: guard.refused, named: guard.named, destinations: guard.destinations() }
      return seen
    } finally {
      gone?.stop()
      await endBrowser(browser, !gone?.silent())
    }
  } finally {
    await within(guard.close(), BROWSER_CLOSE_MS, 'the guard').catch(() => undefined)
  }
}

interface Driven {
  browser: Browser
  /** The browser's own, not the page's. */
  session: CDPSession
  gone: Gone
}

async function watchIn(driven: Driven, seen: Seen, guard: Guard, options: WatchOptions): Promise<void> {
  const { browser, session, gone } = driven
  const close = () => void browser.close().catch(() => undefined)
  options.signal.addEventListener('abort', close, { once: true })
  try {
    // Each step raced against the browser's end: one that stopped answering fails the check in seconds.
    const page = await gone.race(browser.newPage())
    gone.follow(page)
    const inFlight = listen(page, seen, guard, options.url)
    const cdp = await gone.race(page.createCDPSession())
    await gone.race(listenForExceptions(cdp, seen))
    const progress = await gone.race(followRequests(cdp, options.now))
    const starts = await gone.race(followStarts(cdp, page, options.now))
    if (options.basicAuth) await gone.race(answerAuth(cdp, new URL(options.url).origin, options.basicAuth))
    const navigated = await load(page, seen, options, gone)
    const waiting = () => (inFlight.size > 0 || starts.pending()) && !page.isClosed()
    await settle(waiting, options, gone.signal).catch((error: unknown) => {
      if (!gone.signal.aborted) throw error
    })
    seen.started = starts.seen(navigated)
    options.signal.throwIfAborted()
    const stopped = gone.reason() ?? (await stillAnswering(session, page))
    if (stopped) return void seen.problems.push({ kind: 'browser', message: stopped })
    stillOpen(inFlight, progress, seen, options.now())
    await readEngineReports(page, seen)
    await screenshot(browser, page, seen, options)
    options.signal.throwIfAborted()
  } catch (error) {
    options.signal.throwIfAborted()
    // The page or the browser stopped answering a call: the game did not start, whatever was seen before.
    seen.problems.push({
      kind: 'browser',
      message: gone.reason() ?? `the browser stopped answering (${errorMessage(error).split('\n')[0]})`,
    })
  } finally {
    options.signal.removeEventListener('abort', close)
  }
}

function stillOpen(
  inFlight: Set<HTTPRequest>,
  progress: (url: string) => Progress | undefined,
  seen: Seen,
  now: number,
) {
  for (const request of inFlight) {
    const url = request.url()
    if (!web(url) || icon(request)) continue
    const { bytes = 0, total, started = now } = progress(url) ?? {}
    seen.problems.push({ kind: 'request', url, stalled: { bytes, total, ms: now - started } })
  }
}

function listen(page: Page, seen: Seen, guard: Guard, url: string): Set<HTTPRequest> {
  const inFlight = new Set<HTTPRequest>()
  const refused = new Set<HTTPRequest>()
  const problem = (p: Problem) => seen.problems.push(p)
  page.on('console', (message: ConsoleMessage) => {
    // The browser's own "Failed to load resource" lines are the failed requests, said once below.
    if (message.type() !== 'error' || message.text().startsWith('Failed to load resource')) return
    problem({ kind: 'console', message: message.text(), url: message.location().url })
  })
  page.on('dialog', (dialog) => {
    problem({ kind: 'alert', message: dialog.message() })
    void dialog.dismiss().catch(() => undefined)
  })
  let navigatingTo = url
  page.on('request', (request: HTTPRequest) => {
    inFlight.add(request)
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) navigatingTo = request.url()
  })
  const origin = new URL(url).origin
  page.on('framenavigated', (frame) => {
    if (frame !== page.mainFrame()) return
    // A hash or pushState within the deployed origin stays; another origin, about:blank, leaves.
    // The browser's error page stands for the address it could not reach.
    const to = frame.url().startsWith('chrome-error:') ? navigatingTo : frame.url()
    if (originOf(to) !== origin) problem({ kind: 'left', url: to })
    // A page that left for another keeps none of its requests waited for (some never report an end).
    inFlight.clear()
  })
  // Said as soon as its headers arrive: before what the page does about it (a loader's error).
  page.on('response', (response: HTTPResponse) => {
    const request = response.request()
    if (!web(request.url()) || icon(request)) return
    if (response.status() < 400) return void seen.answered++
    refused.add(request)
    problem({ kind: 'request', url: request.url(), status: response.status() })
  })
  page.on('requestfinished', (request: HTTPRequest) => void inFlight.delete(request))
  page.on('requestfailed', (request: HTTPRequest) => {
    inFlight.delete(request)
    const failure = request.failure()?.errorText ?? 'failed'
    // A request the page itself cancelled (a navigation away, an aborted fetch) is not a failure to serve.
    // An answer said above whose body then failed (a 404 page with the route's Content-Encoding) is said once.
    if (!web(request.url()) || icon(request) || refused.has(request) || failure === 'net::ERR_ABORTED') return
    // Said once, as a connection refused by the guard: not the host's failure to serve.
    const { host, port } = destinationOf(new URL(request.url()))
    if (guard.wasRefused(host, port)) return
    problem({ kind: 'request', url: request.url(), failure })
  })
  return inFlight
}

const originOf = (url: string) => URL.parse(url)?.origin ?? 'null'

const web = (url: string) => url.startsWith('http:') || url.startsWith('https:')

/** The browser's own request for the tab's icon: a site without one still starts. */
const icon = (request: HTTPRequest) =>
  request.resourceType() === 'other' && new URL(request.url()).pathname.endsWith('/favicon.ico')

/**
 * Uncaught exceptions, from the protocol itself: it names the file a SyntaxError is in (a compressed
 * script read as text), which the driver's page errors leave out.
 */
async function listenForExceptions(cdp: CDPSession, seen: Seen): Promise<void> {
  cdp.on('Runtime.exceptionThrown', ({ exceptionDetails: details }) => {
    const frame = details.stackTrace?.callFrames[0]
    const url = frame?.url || details.url
    const line = (frame?.lineNumber ?? details.lineNumber) + 1
    const column = (frame?.columnNumber ?? details.columnNumber) + 1
    const what = details.exception?.description?.split('\n')[0] ?? details.text
    seen.problems.push({ kind: 'exception', message: url ? `${what} at ${url}:${line}:${column}` : what })
  })
  await cdp.send('Runtime.enable')
}

/**
 * Answers the host's basic-auth challenges for the namespace's own origin only: another origin the
 * page loads from never sees the credentials.
 */
async function answerAuth(cdp: CDPSession, origin: string, auth: BasicAuth): Promise<void> {
  await cdp.send('Fetch.enable', { handleAuthRequests: true, patterns: [{ urlPattern: `${origin}/*` }] })
  cdp.on('Fetch.requestPaused', (event) => {
    void cdp.send('Fetch.continueRequest', { requestId: event.requestId }).catch(() => undefined)
  })
  cdp.on('Fetch.authRequired', (event) => {
    const ours = new URL(event.request.url).origin === origin && event.authChallenge.source === 'Server'
    void cdp
      .send('Fetch.continueWithAuth', {
        requestId: event.requestId,
        authChallengeResponse: ours
          ? { response: 'ProvideCredentials', username: auth.user, password: auth.password }
          : { response: 'CancelAuth' },
      })
      .catch(() => undefined)
  })
}

/** Returns when the navigation started. */
async function load(page: Page, seen: Seen, options: WatchOptions, gone: Gone): Promise<number> {
  const started = options.now()
  try {
    await gone.race(page.goto(options.url, { waitUntil: 'load', timeout: options.loadTimeoutMs }))
    seen.loadMs = options.now() - started
  } catch (error) {
    options.signal.throwIfAborted()
    if (!gone.signal.aborted)
      seen.problems.push({ kind: 'load', message: errorMessage(error).split('\n')[0]! })
  }
  return started
}

const IN_FLIGHT_CHECK_MS = 100

/**
 * Watches for watchMs after the load, then while requests are in flight or the engine's start has not
 * resolved, for as long again at most: a game that polls or streams is not waited for beyond that.
 */
async function settle(waiting: () => boolean, options: WatchOptions, gone: AbortSignal): Promise<void> {
  const signal = AbortSignal.any([options.signal, gone])
  await sleep(options.watchMs, undefined, { signal })
  const settled = () => Promise.resolve(waiting() ? {} : undefined)
  await pollUntil(settled, {
    timeoutMs: options.watchMs,
    clock: { now: options.now },
    signal,
    waits: { firstMs: IN_FLIGHT_CHECK_MS, longestMs: IN_FLIGHT_CHECK_MS },
  })
}

async function readEngineReports(page: Page, seen: Seen): Promise<void> {
  const reports = await within(page.evaluate(engineReports), BROWSER_ANSWER_MS, 'the page').catch(
    (): EngineReport[] => [],
  )
  // Unity's template alerts what its banner shows: said once.
  const alerted = new Set(seen.problems.kept.map((p) => (p.kind === 'alert' ? p.message : '')))
  for (const report of reports)
    if (!alerted.has(report.message)) seen.problems.push({ kind: 'engine', ...report })
}

async function screenshot(browser: Browser, page: Page, seen: Seen, options: WatchOptions): Promise<void> {
  const rect = await within(page.evaluate(largestCanvas), BROWSER_ANSWER_MS, 'the page').catch(
    () => undefined,
  )
  await mkdir(path.dirname(options.screenshotFile), { recursive: true })
  const png = await within(page.screenshot({ type: 'png' }), BROWSER_ANSWER_MS, 'the screenshot')
  // A new file of our own: whatever was at that name (a link elsewhere, for one) is removed, not written through.
  await rm(options.screenshotFile, { force: true })
  await writeFile(options.screenshotFile, png, { flag: 'wx', mode: 0o644 })
  seen.screenshot = options.screenshotFile
  const shows = await within(countColours(browser, Buffer.from(png), rect), BROWSER_ANSWER_MS, 'the browser')
  seen.painted = shows.page
  seen.canvas = shows.canvas
}
