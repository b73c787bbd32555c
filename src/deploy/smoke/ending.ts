// How a watch ends when the page or the browser stops answering. A browser that stops (SIGSTOP, a hung
// main loop) sends no event at all, and every call would wait for its full bound: so it is asked every
// second whether it still answers, and the watch ends once it has been silent for BROWSER_ANSWER_MS.

import type { ChildProcess } from 'node:child_process'
import type { Browser, CDPSession, Page } from 'puppeteer-core'
import { pollUntil } from '../../common/poll.ts'
import {
  BROWSER_ANSWER_MS,
  BROWSER_CLOSE_MS,
  TimeLimitError,
  within,
  type Clock,
} from '../../common/timeouts.ts'

const HEARTBEAT_MS = 1_000

/** What ends the watch early: the renderer crashed, the browser went away or fell silent. */
export interface Gone {
  /** Aborted, with the reason in words. */
  signal: AbortSignal
  reason(): string | undefined
  /** The browser fell silent or went away: nothing is to be asked of it any more. */
  silent(): boolean
  /** Hears of the page's renderer crashing. */
  follow(page: Page): void
  /** Rejects with the reason as soon as the page or the browser is gone. */
  race<T>(call: Promise<T>): Promise<T>
  stop(): void
}

/** `session`: the browser's own (its target's). */
export function watchGone(browser: Browser, session: CDPSession, clock: Clock): Gone {
  const controller = new AbortController()
  const stopped = new AbortController()
  let silent = false
  const end = (why: string) => {
    if (!controller.signal.aborted) controller.abort(why)
  }
  browser.on('disconnected', () => {
    silent = true
    end('the browser exited or dropped its connection while the page was watched')
  })
  void fellSilent(session, AbortSignal.any([controller.signal, stopped.signal]), clock).then((fell) => {
    if (!fell) return
    silent = true
    end(
      `the browser stopped answering: it did not answer for ${BROWSER_ANSWER_MS / 1000} s while the page was watched`,
    )
  })
  const gone = new Promise<never>((_, reject) => {
    controller.signal.addEventListener('abort', () => reject(new Error(String(controller.signal.reason))), {
      once: true,
    })
  })
  gone.catch(() => undefined)
  return {
    signal: controller.signal,
    reason: () => (controller.signal.aborted ? String(controller.signal.reason) : undefined),
    silent: () => silent,
    // puppeteer's only 'error' on a page is Inspector.targetCrashed.
    follow: (page) =>
      void page.on('error', () =>
        end("the page's renderer crashed (its process ended) while it was watched"),
      ),
    race: (call) => Promise.race([call, gone]),
    stop: () => stopped.abort(),
  }
}

async function fellSilent(session: CDPSession, signal: AbortSignal, clock: Clock): Promise<boolean> {
  const polled = await pollUntil(async () => ((await answers(session)) ? {} : undefined), {
    timeoutMs: Number.POSITIVE_INFINITY,
    clock,
    signal,
    waits: { firstMs: HEARTBEAT_MS, longestMs: HEARTBEAT_MS },
  }).catch(() => undefined)
  return polled?.seen === true
}

/** Whether it answers within BROWSER_ANSWER_MS; a connection gone is said by 'disconnected', not here. */
async function answers(session: CDPSession): Promise<boolean> {
  try {
    await within(session.send('Browser.getVersion'), BROWSER_ANSWER_MS, 'the browser')
    return true
  } catch (error) {
    return !(error instanceof TimeLimitError)
  }
}

/** Once the watch is over: a page that does not answer while the browser does is frozen. */
export async function stillAnswering(session: CDPSession, page: Page): Promise<string | undefined> {
  const [pageAnswer, browserAnswer] = await Promise.allSettled([
    within(
      page.evaluate(() => 1),
      BROWSER_ANSWER_MS,
      'the page',
    ),
    within(session.send('Browser.getVersion'), BROWSER_ANSWER_MS, 'the browser'),
  ])
  if (browserAnswer.status === 'rejected')
    return `the browser stopped answering: it did not answer within ${BROWSER_ANSWER_MS / 1000} s after the watch`
  if (pageAnswer.status === 'rejected')
    return `the page's main thread froze: it did not answer within ${BROWSER_ANSWER_MS / 1000} s after the watch (a loop that never yields)`
  return undefined
}

/** Closed when it still answers, then ended with every process it started. */
export async function endBrowser(browser: Browser, answering: boolean): Promise<void> {
  const child = browser.process()
  if (answering) await within(browser.close(), BROWSER_CLOSE_MS, 'the browser').catch(() => undefined)
  // The driver removes the browser's profile once its exit is seen.
  if (child?.pid) await endGroup(child, BROWSER_CLOSE_MS, 'the browser')
}

/**
 * Kills a process launched detached (on POSIX its group: it and every process it started; SIGKILL
 * ends a stopped one too), and waits for its exit within boundMs.
 */
export async function endGroup(child: ChildProcess, boundMs: number, what: string): Promise<void> {
  // One that could not be started (EACCES) has an exit code already, and never exits: not waited for.
  const exited =
    child.exitCode === null && child.signalCode === null
      ? new Promise((resolve) => child.once('exit', resolve))
      : undefined
  try {
    if (process.platform === 'win32') child.kill('SIGKILL')
    else process.kill(-child.pid!, 'SIGKILL')
  } catch {
    // Ended already, with everything it started.
  }
  if (exited) await within(exited, boundMs, what).catch(() => undefined)
}
