// Each namespace's CDN config as the CDN's router sees it. A change (a publish, a domain added or
// removed) makes the service's queued worker rebuild the namespace's config, which the router loads on
// its next poll: the host serves it publishDelayMs later. A namespace created directly on a version
// gets no config at all unless serveOnCreate (the creation race, lost: see EmulatorOptions).

import type { NamespaceRecord } from './state.ts'

export class CdnConfigs {
  private readonly delayMs: number
  private readonly timers = new Set<NodeJS.Timeout>()
  /** The newest rebuild scheduled per namespace, and the newest one its host serves. */
  private readonly scheduled = new WeakMap<NamespaceRecord, number>()
  private readonly applied = new WeakMap<NamespaceRecord, number>()

  constructor(delayMs: number) {
    this.delayMs = delayMs
  }

  /** Rebuilds the namespace's config from its version now; its host serves that delayMs later. */
  rebuild(namespace: NamespaceRecord): void {
    const versionId = namespace.versionId
    const generation = (this.scheduled.get(namespace) ?? 0) + 1
    this.scheduled.set(namespace, generation)
    const apply = () => {
      // A rebuild that arrives after a newer one was loaded changes nothing.
      if (generation < (this.applied.get(namespace) ?? 0)) return
      this.applied.set(namespace, generation)
      namespace.liveVersionId = versionId
    }
    if (this.delayMs === 0) {
      apply()
      return
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer)
      apply()
    }, this.delayMs)
    timer.unref()
    this.timers.add(timer)
  }

  /** Drops the rebuilds still waiting (the emulator is closing). */
  close(): void {
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
  }
}
