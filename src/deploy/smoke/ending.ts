// How a watch ends when the page or the browser stops answering: every call to them after the watch
// is raced against a deadline, a crashed renderer or a browser gone ends the watch at once, and the
// browser's processes are killed on the way out. The problems seen before are kept: a game that
// froze or crashed did not start.

import type { Browser, Page } from 'puppeteer-core'

/** How long a call to the page or the browser may take once the watch is over. */
export const AFTER_WATCH_MS = 5_000

/** The bound of any one call to the browser (puppeteer's protocolTimeout). */
export const PROTOCOL_TIMEOUT_MS = 30_000

/** How long the browser is given to close before its processes are killed. */
const CLOSE_MS = 3_000

export class NoAnswer extends Error {
  override name = 'NoAnswer'
}

/** The call's answer, or a NoAnswer naming it once ms have passed without one. */
export async function within<T>(call: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NoAnswer(`${what} did not answer within ${ms / 1000} s`)), ms)
  })
  try {
    return await Promise.race([call, late])
  } finally {
    clearTimeout(timer)
  }
}

/** What ended the watch early: the renderer crashed, the browser went away. */
export interface Gone {
  /** Aborted with the reason in words when the page or the browser is gone. */
  signal: AbortSignal
  reason(): string | undefined
}

export function watchGone(browser: Browser, page: Page): Gone {
  const controller = new AbortController()
  const end = (why: string) => {
    if (!controller.signal.aborted) controller.abort(why)
  }
  // puppeteer's only 'error' on a page is Inspector.targetCrashed.
  page.on('error', () => end("the page's renderer crashed (its process ended) while it was watched"))
  browser.on('disconnected', () =>
    end('the browser exited or dropped its connection while the page was watched'),
  )
  return {
    signal: controller.signal,
    reason: () => (controller.signal.aborted ? String(controller.signal.reason) : undefined),
  }
}

/**
 * Whether the page and the browser still answer: a page that does not while the browser does is
 * frozen (a loop that never yields); one where neither does, the browser stopped answering.
 */
export async function stillAnswering(browser: Browser, page: Page): Promise<string | undefined> {
  const [pageAnswer, browserAnswer] = await Promise.allSettled([
    within(
      page.evaluate(() => 1),
      AFTER_WATCH_MS,
      'the page',
    ),
    // Asked afresh: the driver keeps the version it was told at the start.
    within(
      browser
        .target()
        .createCDPSession()
        .then((session) => session.send('Browser.getVersion')),
      AFTER_WATCH_MS,
      'the browser',
    ),
  ])
  if (browserAnswer.status === 'rejected')
    return `the browser stopped answering: it did not answer within ${AFTER_WATCH_MS / 1000} s after the watch`
  if (pageAnswer.status === 'rejected')
    return `the page's main thread froze: it did not answer within ${AFTER_WATCH_MS / 1000} s after the watch (a loop that never yields)`
  return undefined
}

/** Closes the browser, and kills what is left of its processes (its process group, where there is one). */
export async function endBrowser(browser: Browser): Promise<void> {
  const child = browser.process()
  await within(browser.close(), CLOSE_MS, 'the browser').catch(() => undefined)
  if (!child?.pid) return
  const exited =
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => child.once('exit', () => resolve()))
  try {
    // Launched detached on POSIX: the group is the browser and every process it started.
    if (process.platform === 'win32') child.kill('SIGKILL')
    else process.kill(-child.pid, 'SIGKILL')
  } catch {
    // Already ended.
  }
  await within(exited, CLOSE_MS, 'the browser').catch(() => undefined)
}
