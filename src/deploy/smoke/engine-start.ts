// The engine's own word that its game started, heard from the page (in-page-start.ts): its start call,
// whether its promise resolved (and when) or rejected (and why), and the WebGL contexts created.

import { randomBytes } from 'node:crypto'
import type { CDPSession, Page } from 'puppeteer-core'
import { clip } from '../../common/format.ts'
import { ENGINE_STARTS, type EngineName } from '../collect/engines.ts'
import { startScript, type StartEvent } from './in-page-start.ts'

interface EngineStart {
  engine: EngineName
  /** "createUnityInstance", "engine.startGame". */
  call: string
  /** From the navigation's start to its promise's resolution; undefined when it did not resolve. */
  resolvedMs?: number
  rejected?: string
}

export interface StartSeen {
  /** The page's first; undefined when it made none. */
  engine?: EngineStart
  /** Kinds ("webgl2", "webgl") created, and those asked for and refused (null). */
  webgl: { created: string[]; refused: string[] }
}

interface StartFollower {
  /** Called, and neither resolved nor rejected. */
  pending(): boolean
  /** Its times from the navigation's start (`since`). */
  seen(since: number): StartSeen
}

const KNOWN: readonly string[] = Object.keys(ENGINE_STARTS)

/** Hooks every document the page opens from now on; call before the navigation. */
export async function followStarts(cdp: CDPSession, page: Page, now: () => number): Promise<StartFollower> {
  const binding = `gamehost_${randomBytes(12).toString('hex')}`
  let engine: (Omit<EngineStart, 'resolvedMs'> & { resolvedAt?: number }) | undefined
  const webgl = { created: new Set<string>(), refused: new Set<string>() }
  cdp.on('Runtime.bindingCalled', ({ name, payload }) => {
    if (name !== binding) return
    const event = parse(payload)
    if (!event) return
    if ('webgl' in event) return void (event.created ? webgl.created : webgl.refused).add(event.webgl)
    if (event.outcome === 'called') engine ??= { engine: event.engine, call: event.call }
    if (!engine || engine.call !== event.call || engine.resolvedAt || engine.rejected) return
    if (event.outcome === 'resolved') engine.resolvedAt = now()
    if (event.outcome === 'rejected') engine.rejected = event.reason || 'no reason given'
  })
  await cdp.send('Runtime.addBinding', { name: binding })
  await page.evaluateOnNewDocument(startScript(binding, ENGINE_STARTS))
  return {
    pending: () => engine !== undefined && engine.resolvedAt === undefined && engine.rejected === undefined,
    seen: (since) => ({
      engine: engine && {
        engine: engine.engine,
        call: engine.call,
        resolvedMs: engine.resolvedAt === undefined ? undefined : engine.resolvedAt - since,
        rejected: engine.rejected,
      },
      webgl: { created: [...webgl.created], refused: [...webgl.refused] },
    }),
  }
}

function parse(payload: string): StartEvent | undefined {
  let event: unknown
  try {
    event = JSON.parse(payload)
  } catch {
    return undefined
  }
  const e = event as Record<string, unknown> | null
  if (!e || typeof e !== 'object') return undefined
  if (typeof e.webgl === 'string') return { webgl: clip(e.webgl, 40), created: e.created === true }
  if (typeof e.engine !== 'string' || !KNOWN.includes(e.engine) || typeof e.call !== 'string')
    return undefined
  const base = { engine: e.engine as EngineName, call: clip(e.call, 60) }
  if (e.outcome === 'called' || e.outcome === 'resolved') return { ...base, outcome: e.outcome }
  if (e.outcome === 'rejected') return { ...base, outcome: 'rejected', reason: clip(String(e.reason), 300) }
  return undefined
}
