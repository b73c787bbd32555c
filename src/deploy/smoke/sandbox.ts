// Chrome's sandbox keeps a renderer (the build's code) from the rest of the machine. On Linux Chrome
// refuses it to root, and needs unprivileged user namespaces or its setuid helper: where neither is to
// be had, the browser is started without it, and the log says why.

import { readFileSync } from 'node:fs'
import { messageOf } from '../../common/format.ts'

export interface Sandbox {
  on: boolean
  why?: string
}

export interface Host {
  platform: NodeJS.Platform
  /** The effective user id; undefined on Windows. */
  uid: number | undefined
  /** A /proc/sys setting; undefined when there is none. */
  read: (file: string) => string | undefined
}

const thisHost = (): Host => ({
  platform: process.platform,
  uid: process.geteuid?.(),
  read: (file) => {
    try {
      return readFileSync(file, 'utf8').trim()
    } catch {
      return undefined
    }
  },
})

/** Chrome's own words, which puppeteer's launch error carries. */
const REFUSED = /No usable sandbox|without --no-sandbox|SUID sandbox|move to new namespace/i

/** Off only where it is known not to work. */
export function sandboxAtStart(host: Host): Sandbox {
  if (host.platform === 'linux' && host.uid === 0)
    return { on: false, why: 'the runner runs as root, and Chrome refuses its sandbox to root' }
  return { on: true }
}

export function sandboxRefused(error: unknown, host: Host): Sandbox | undefined {
  const said = messageOf(error)
  if (host.platform !== 'linux' || !REFUSED.test(said)) return undefined
  const helper = 'and no setuid sandbox helper is installed'
  if (host.read('/proc/sys/kernel/unprivileged_userns_clone') === '0')
    return {
      on: false,
      why: `the kernel forbids unprivileged user namespaces (kernel.unprivileged_userns_clone is 0) ${helper}`,
    }
  if (host.read('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') === '1')
    return {
      on: false,
      why: `AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns is 1) and no profile lets this browser use them`,
    }
  const line =
    said
      .split('\n')
      .find((l) => REFUSED.test(l))
      ?.trim() ?? ''
  return { on: false, why: `Chrome could not start its sandbox here (${line.slice(0, 200)})` }
}

/** Again without the sandbox when Chrome says it cannot start it. */
export async function launchSandboxed<T>(
  launch: (sandbox: boolean) => Promise<T>,
  host: Host = thisHost(),
): Promise<{ browser: T; sandbox: Sandbox }> {
  const atStart = sandboxAtStart(host)
  if (!atStart.on) return { browser: await launch(false), sandbox: atStart }
  try {
    return { browser: await launch(true), sandbox: atStart }
  } catch (error) {
    const refused = sandboxRefused(error, host)
    if (!refused) throw error
    return { browser: await launch(false), sandbox: refused }
  }
}
