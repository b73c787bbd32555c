// The `browser` input, else the one the usual environment variables name, else the first at its usual
// install path on this OS (GitHub's runners all carry Google Chrome; Debian's package /usr/bin/chromium).

import { accessSync, constants, statSync } from 'node:fs'
import path from 'node:path'
import { inputName } from '../../common/input-naming.ts'
import { Input } from '../../inputs/constants.ts'

/** Read in this order; each is set by a tool that runs Chrome (chrome-launcher, Karma, Puppeteer, the runners). */
const BROWSER_ENV = ['CHROME_PATH', 'CHROME_BIN', 'PUPPETEER_EXECUTABLE_PATH'] as const

export interface FoundBrowser {
  path: string
  /** Where it was found: "browser", "CHROME_BIN", "/usr/bin/chromium". */
  from: string
}

interface FindOptions {
  given?: string
  env: NodeJS.ProcessEnv
  platform: NodeJS.Platform
  /** Default: an executable regular file here. */
  runnable?: (file: string) => boolean
}

export function installPaths(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): string[] {
  if (platform === 'darwin') {
    const apps = ['Google Chrome', 'Google Chrome for Testing', 'Chromium'].map(
      (name) => `/Applications/${name}.app/Contents/MacOS/${name}`,
    )
    return env.HOME ? [...apps, ...apps.map((app) => path.posix.join(env.HOME!, app))] : apps
  }
  if (platform === 'win32') {
    const roots = [env.PROGRAMFILES, env['PROGRAMFILES(X86)'], env.LOCALAPPDATA].filter(
      (root): root is string => Boolean(root),
    )
    return roots.flatMap((root) => [
      path.win32.join(root, 'Google', 'Chrome', 'Application', 'chrome.exe'),
      path.win32.join(root, 'Chromium', 'Application', 'chrome.exe'),
    ])
  }
  return [
    '/usr/bin/google-chrome',
    '/usr/bin/google-chrome-stable',
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/snap/bin/chromium',
    '/opt/google/chrome/chrome',
  ]
}

function isRunnable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false
    accessSync(file, process.platform === 'win32' ? constants.F_OK : constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** A `browser` input that is not a browser here is said as such, never replaced by another. */
export function findBrowser(options: FindOptions): FoundBrowser | { missing: string } {
  const runnable = options.runnable ?? isRunnable
  const given = options.given?.trim()
  if (given) {
    return runnable(given)
      ? { path: given, from: inputName(Input.Browser) }
      : { missing: `${inputName(Input.Browser)} is ${given}, which is not a program this runner can run` }
  }
  for (const name of BROWSER_ENV) {
    const value = options.env[name]?.trim()
    if (value && runnable(value)) return { path: value, from: name }
  }
  const found = installPaths(options.platform, options.env).find((file) => runnable(file))
  if (found) return { path: found, from: found }
  return {
    missing:
      `no Chrome or Chromium found (${BROWSER_ENV.join(', ')} are unset, and none is at the usual paths of this OS): ` +
      `set ${inputName(Input.Browser)} to one's path, or install one (apt-get install chromium)`,
  }
}

/** "Chromium 156", "Chrome 131": the product by the program's name, the major version by what it says. */
export function browserName(file: string, version: string): string {
  const major = /\/(\d+)\./.exec(version)?.[1] ?? /(\d+)\./.exec(version)?.[1]
  const lower = file.toLowerCase()
  const product = lower.includes('chromium') ? 'Chromium' : lower.includes('msedge') ? 'Edge' : 'Chrome'
  return major ? `${product} ${major}` : product
}
