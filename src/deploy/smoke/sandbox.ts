// Chrome's sandbox, which keeps a renderer (the build's code) from the rest of the machine, is kept on
// wherever the OS lets Chrome start it. On Linux Chrome refuses it to root, and needs unprivileged user
// namespaces or its setuid helper: where neither is to be had, the browser is started without it, and
// the log says so and why.

import { readFileSync } from 'node:fs'

export interface Sandbox {
  on: boolean
  /** Why it is off: "running as root, …". */
  why?: string
}

export interface Host {
  platform: NodeJS.Platform
  /** The effective user id; undefined on Windows. */
  uid: number | undefined
  /** A file's text (a /proc/sys setting), or undefined when there is none. */
  read: (file: string) => string | undefined
}

export const thisHost = (): Host => ({
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

/** Chrome's own words when it cannot start its sandbox, which puppeteer's launch error carries. */
const REFUSED = /No usable sandbox|without --no-sandbox|SUID sandbox|move to new namespace/i

/** Before any launch: off only where it is known not to work (root on Linux). */
export function sandboxAtStart(host: Host): Sandbox {
  if (host.platform === 'linux' && host.uid === 0)
    return { on: false, why: 'the runner runs as root, and Chrome refuses its sandbox to root' }
  return { on: true }
}

/** Why a launch with the sandbox was refused, when it was: what the OS forbids, as far as it says. */
export function sandboxRefused(error: unknown, host: Host): Sandbox | undefined {
  const said = error instanceof Error ? error.message : String(error)
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

/**
 * Launches with the sandbox where it can work, and again without it when Chrome says it cannot start
 * it; any other failure is thrown as it is.
 */
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
