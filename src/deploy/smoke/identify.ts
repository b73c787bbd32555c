// Whether the program the smoke test is to open the game in is a Chrome or Chromium, asked before the
// deploy creates anything: anything else (a script, another browser) would be waited on for the whole
// launch timeout and leave its children running.

import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { UsageError } from '../../api/errors.ts'
import { clip } from '../../common/format.ts'
import { inputAssignment, inputName } from '../../common/input-naming.ts'
import { Input } from '../../inputs/constants.ts'
import type { FoundBrowser } from './browser.ts'
import { BROWSER_VERSION_TIMEOUT_MS, within } from '../../common/timeouts.ts'
import { endGroup } from './ending.ts'

/** Chrome, Chromium, Chrome for Testing, Edge: Chromium's family, which the driver speaks to. */
const CHROMIUM_FAMILY = /Chrom|Edge/

/** Its first line of answer to --version; its processes ended whatever it does. */
async function askVersion(file: string): Promise<string | undefined> {
  const child = spawn(file, ['--version'], {
    stdio: ['ignore', 'pipe', 'ignore'],
    detached: process.platform !== 'win32',
  })
  let said = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => {
    if (said.length < 1000) said += chunk
  })
  const ended = await within(once(child, 'close'), BROWSER_VERSION_TIMEOUT_MS, file).then(
    () => true,
    () => false,
  )
  await endGroup(child, BROWSER_VERSION_TIMEOUT_MS, file)
  return ended ? said.split('\n')[0]?.trim() : undefined
}

/** How the program was named: `browser is X`, `CHROME_BIN names X`, `X, at this OS's usual path,`. */
function named(browser: FoundBrowser): string {
  if (browser.from === inputName(Input.Browser)) return `${browser.from} is ${browser.path}, which`
  if (browser.from === browser.path) return `${browser.path}, at this OS's usual path for one,`
  return `${browser.from} names ${browser.path}, which`
}

/**
 * Throws a UsageError when it is not one of Chromium's family. Chrome on Windows prints nothing for
 * --version: there, the launch's own timeout is left to tell.
 */
export async function requireChrome(browser: FoundBrowser): Promise<void> {
  if (process.platform === 'win32') return
  const said = await askVersion(browser.path)
  if (said !== undefined && CHROMIUM_FAMILY.test(said)) return
  const what =
    said === undefined
      ? `it did not answer --version within ${BROWSER_VERSION_TIMEOUT_MS / 1000} s`
      : said
        ? `it answers --version with "${clip(said, 100)}"`
        : 'it answers --version with nothing'
  throw new UsageError(
    `${named(browser)} is not Chrome or Chromium: ${what}. Set ${inputName(Input.Browser)} to a Chrome or Chromium's path, or ${inputAssignment(Input.SmokeTest, 'false')}`,
  )
}
