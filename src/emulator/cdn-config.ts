// Each namespace's CDN config as the CDN's router sees it. A change (a publish, a domain added or
// removed, its basic auth changed) makes the service's queued worker rebuild the namespace's config, which the router loads on
// its next poll: the host serves it publishDelayMs later. A namespace created directly on a version
// gets no config at all unless serveOnCreate (the creation race, lost: see EmulatorOptions).

import type { EmulatorTimer } from './options.ts'
import type { CdnAuth, NamespaceRecord } from './state.ts'

/** The users of a namespace's basic auth the CDN applies; the others' credentials are refused. */
export const CDN_AUTH_USERS_APPLIED = 10

export class CdnConfigs {
  private readonly delayMs: number
  private readonly timer: EmulatorTimer
  /** What cancels each rebuild still waiting. */
  private readonly waiting = new Set<() => void>()
  /** The newest rebuild scheduled per namespace, and the newest one its host serves. */
  private readonly scheduled = new WeakMap<NamespaceRecord, number>()
  private readonly applied = new WeakMap<NamespaceRecord, number>()

  constructor(delayMs: number, timer: EmulatorTimer) {
    this.delayMs = delayMs
    this.timer = timer
  }

  /**
   * Rebuilds the namespace's config from its version and basic auth now (the CDN applies the first
   * CDN_AUTH_USERS_APPLIED users); its hosts serve that delayMs later.
   */
  rebuild(namespace: NamespaceRecord): void {
    const versionId = namespace.versionId
    const auth: CdnAuth = {
      type: namespace.authType,
      users: [...namespace.authUsers].slice(0, CDN_AUTH_USERS_APPLIED),
    }
    const generation = (this.scheduled.get(namespace) ?? 0) + 1
    this.scheduled.set(namespace, generation)
    const apply = () => {
      // A rebuild that arrives after a newer one was loaded changes nothing.
      if (generation < (this.applied.get(namespace) ?? 0)) return
      this.applied.set(namespace, generation)
      namespace.liveVersionId = versionId
      namespace.liveAuth = auth
    }
    if (this.delayMs === 0) {
      apply()
      return
    }
    const cancel = this.timer.after(this.delayMs, () => {
      this.waiting.delete(cancel)
      apply()
    })
    this.waiting.add(cancel)
  }

  /** Drops the rebuilds still waiting (the emulator is closing). */
  close(): void {
    for (const cancel of this.waiting) cancel()
    this.waiting.clear()
  }
}
