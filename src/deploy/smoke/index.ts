// The smoke test (`smoke-test`): once the URL is seen live, a headless Chrome or Chromium opens it and
// watches the game start. A failure is handled as a publish not seen live is (on-verify-failure:
// rollback, fail or warn); no browser on the machine is a skip, said so, never a pass.

import { mkdtemp } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Run } from '../../api/run.ts'
import { capital, errorMessage, formatSeconds, plural } from '../../common/format.ts'
import type { Logger } from '../../common/logger.ts'
import { every, PROGRESS_EVERY_MS } from '../../common/poll.ts'
import { PAGE_LOAD_TIMEOUT_MS } from '../../common/timeouts.ts'
import { inputName } from '../../common/input-naming.ts'
import { Input } from '../../inputs/constants.ts'
import type { DeployInputs, TargetedInputs } from '../../inputs/deploy.ts'
import type { Published } from '../live/prepare.ts'
import { afterFailure, putBack, putBackFailed } from '../live/publish-and-see.ts'
import { findBrowser, type FoundBrowser } from './browser.ts'
import { requireChrome } from './identify.ts'
import { judge, SmokeTestError, type SmokeResult } from './verdict.ts'
import { watchPage, type Seen } from './watch.ts'

export type { SmokeResult, SmokeStatus } from './verdict.ts'

/** The browser the smoke test opens the game in, or why there is none (a skip). */
export type ChosenBrowser = FoundBrowser | { missing: string }

/**
 * Chosen before the deploy creates anything: a program that is not a Chrome or Chromium is refused
 * then, not after the build is published. Undefined when smoke-test is off.
 */
export async function chooseBrowser(
  inputs: Pick<DeployInputs, 'smoke'>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ChosenBrowser | undefined> {
  if (!inputs.smoke.enabled) return undefined
  const browser = findBrowser({ given: inputs.smoke.browser, env, platform: process.platform })
  if (!('missing' in browser)) await requireChrome(browser)
  return browser
}

export interface SmokeOptions {
  inputs: TargetedInputs
  browser: ChosenBrowser
  run: Pick<Run, 'client' | 'signal' | 'clock' | 'timer'>
  published: Published
  url: string
  /** The deploy's result: the smoke test's is put there before anything is thrown. */
  result: { smoke?: SmokeResult; provisioned: { namespaceId?: string; nameId?: string } }
  logger: Logger
  /** Where the screenshot goes (RUNNER_TEMP); a folder of its own in the OS's when it is removed at the end. */
  tempDir: string
  tempDirRemoved?: boolean
  watch?: typeof watchPage
}

export async function smokeTest(options: SmokeOptions): Promise<void> {
  const { inputs, logger, published, run } = options
  if (!inputs.smoke.enabled) return
  const smoke = await logger.group('Smoke test', () => look(options))
  options.result.smoke = smoke
  if (smoke.status !== 'failed') return
  const onFailure = inputs.verify.onFailure
  const account = `${capital(smoke.line)}. ${capital(smoke.remedy ?? '')}.`
  if (onFailure === 'warn') {
    logger.warning(
      `Smoke test: ${account} ${inputName(Input.OnVerifyFailure)} is warn: the run succeeds with ${inputName(Input.SmokeTest)} failed.`,
      { title: 'Smoke test failed' },
    )
    return
  }
  const { namespaceId, nameId } = options.result.provisioned
  if (onFailure === 'rollback' && namespaceId) {
    try {
      smoke.rolledBackTo = await putBack(run.client, inputs.connection.gameId, namespaceId, published, logger)
    } catch (error) {
      const message = `Smoke test: ${account} ${putBackFailed(published, error)}`
      throw new SmokeTestError(message, smoke, { cause: error })
    }
  }
  throw new SmokeTestError(
    `Smoke test: ${account} ${afterFailure(onFailure, smoke.rolledBackTo, published, nameId)}`,
    smoke,
  )
}

async function look(options: SmokeOptions): Promise<SmokeResult> {
  const { inputs, logger, url, browser } = options
  const settings = inputs.smoke
  const skipped = (why: string): SmokeResult => {
    logger.warning(`Smoke test skipped: ${why}`, { title: 'Smoke test skipped' })
    return { status: 'skipped', line: `skipped: ${why}` }
  }
  if ('missing' in browser) return skipped(browser.missing)
  logger.info(
    `Opening ${url} in ${browser.path} (from ${browser.from}), watching it for ${settings.watchMs / 1000} s after it loads`,
  )
  let seen: Seen
  let watching: Seen | undefined
  const stopSaying = sayWatching(options, () => watching)
  try {
    seen = await (options.watch ?? watchPage)({
      browserPath: browser.path,
      url,
      basicAuth: inputs.target.basicAuth,
      watchMs: settings.watchMs,
      loadTimeoutMs: PAGE_LOAD_TIMEOUT_MS,
      screenshotFile: await screenshotFile(options),
      signal: options.run.signal,
      now: () => options.run.clock.now(),
      onSeen: (live) => (watching = live),
    })
  } catch (error) {
    options.run.signal.throwIfAborted()
    // The browser would not start: the runner's, not the build's, and no reason to roll a build back.
    const message = errorMessage(error).split('\n')[0]
    return skipped(`${browser.path} could not be driven (${message})`)
  } finally {
    stopSaying()
  }
  if (seen.sandbox && !seen.sandbox.on)
    logger.info(`Browser sandbox off: ${seen.sandbox.why}; the page's code ran with this user's rights`)
  const smoke = judge(seen, settings.watchMs)
  logger.info(`Smoke test: ${smoke.line}`)
  if (smoke.decidedBy) logger.info(`Smoke test decided by: ${smoke.decidedBy}`)
  if (smoke.screenshot) logger.info(`Screenshot: ${smoke.screenshot}`)
  return smoke
}

/** Every PROGRESS_EVERY_MS of a watch: how long it has run, what the page did so far, the time left at most. */
function sayWatching(options: SmokeOptions, live: () => Seen | undefined): () => void {
  const { clock, timer } = options.run
  const started = clock.now()
  const boundMs = PAGE_LOAD_TIMEOUT_MS + 2 * options.inputs.smoke.watchMs
  return every(timer, PROGRESS_EVERY_MS, () => {
    const elapsedMs = clock.now() - started
    const seen = live()
    const page = !seen
      ? 'the browser is starting'
      : `${seen.loadMs === undefined ? 'the page has not loaded yet' : `loaded in ${formatSeconds(seen.loadMs)}`}, ` +
        `${plural(seen.answered, 'request')} answered, ${plural(seen.problems.count(), 'problem')} so far`
    const left = Math.ceil(Math.max(boundMs - elapsedMs, 0) / 1000)
    options.logger.info(
      `Smoke test: still watching ${options.url}, after ${formatSeconds(elapsedMs)}: ${page}; at most ${left} s left`,
    )
  })
}

async function screenshotFile(options: SmokeOptions): Promise<string> {
  const dir = options.tempDirRemoved
    ? await mkdtemp(path.join(os.tmpdir(), 'gamehost-smoke-'))
    : options.tempDir
  return path.join(dir, `gamehost-screenshot-${process.pid}.png`)
}
