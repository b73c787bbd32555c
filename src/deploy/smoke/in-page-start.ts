// Runs in the page before its own scripts: wraps the engine's start call (ENGINE_STARTS) and the
// canvases' getContext, and says what they did through a binding of a name of the driver's own, taken
// off the page at once, so the page's scripts never see it. Serialised by the driver: it may use
// nothing from outside itself.

import type { EngineName } from '../collect/engines.ts'

interface StartHooks {
  unity: { global: string }
  godot: { instanceMark: string; methods: readonly string[]; callPrefix: string }
}

export type StartEvent =
  | { engine: EngineName; call: string; outcome: 'called' | 'resolved' }
  | { engine: EngineName; call: string; outcome: 'rejected'; reason: string }
  | { webgl: string; created: boolean }

type Callable = (this: unknown, ...args: unknown[]) => unknown

interface StartWindow {
  document: {
    addEventListener(type: string, listener: (event: { target: unknown }) => void, capture: boolean): void
  }
  HTMLCanvasElement?: { prototype: { getContext: Callable } }
  OffscreenCanvas?: { prototype: { getContext: Callable } }
}

type Say = (event: StartEvent) => void
type Follow = (engine: EngineName, call: string, original: Callable) => Callable

/** Each part below, given what it needs, and nothing else of this module. */
export function startScript(binding: string, hooks: StartHooks): string {
  return `(() => {
  const say = (${sayingTo.toString()})(${JSON.stringify(binding)})
  if (!say) return
  const follow = (${following.toString()})(say)
  const hooks = ${JSON.stringify(hooks)};
  (${followUnity.toString()})(follow, hooks);
  (${followGodot.toString()})(follow, hooks);
  (${followWebgl.toString()})(say)
})()`
}

function sayingTo(binding: string): Say | undefined {
  const page = globalThis as unknown as Record<string, unknown>
  const send = page[binding]
  try {
    delete page[binding]
  } catch {
    // Kept where it cannot be taken off: its name is the driver's own, unknown to the page.
  }
  if (typeof send !== 'function') return undefined
  return (event) => {
    try {
      ;(send as (text: string) => void)(JSON.stringify(event))
    } catch {
      // The page's own doing (a JSON.stringify replaced): nothing more to say.
    }
  }
}

/** Only its first call is followed. */
function following(say: Say): Follow {
  const why = (error: unknown) =>
    String(error instanceof Error ? `${error.name}: ${error.message}` : error).slice(0, 1000)
  return (engine, call, original) => {
    let followed = false
    return function (this: unknown, ...args: unknown[]) {
      if (followed) return original.apply(this, args)
      followed = true
      say({ engine, call, outcome: 'called' })
      let result: unknown
      try {
        result = original.apply(this, args)
      } catch (error) {
        say({ engine, call, outcome: 'rejected', reason: why(error) })
        throw error
      }
      if (result && typeof (result as Promise<unknown>).then === 'function')
        (result as Promise<unknown>).then(
          () => say({ engine, call, outcome: 'resolved' }),
          (error: unknown) => say({ engine, call, outcome: 'rejected', reason: why(error) }),
        )
      return result
    }
  }
}

/**
 * Unity's loader declares createUnityInstance, and the template calls it from the loader's onload,
 * which this capturing listener runs before.
 */
function followUnity(follow: Follow, hooks: StartHooks): void {
  const page = globalThis as unknown as StartWindow & Record<string, unknown>
  const name = hooks.unity.global
  let followed = false
  page.document.addEventListener(
    'load',
    (event) => {
      const create = page[name]
      if (followed || (event.target as { tagName?: string }).tagName !== 'SCRIPT') return
      if (typeof create !== 'function') return
      followed = true
      page[name] = follow('unity', name, create as Callable)
    },
    true,
  )
}

/** Godot's Engine instance, reached as its constructor sets its mark: its start methods followed as one. */
function followGodot(follow: Follow, hooks: StartHooks): void {
  const { instanceMark: mark, methods, callPrefix } = hooks.godot
  Object.defineProperty(Object.prototype, mark, {
    configurable: true,
    enumerable: false,
    get: () => undefined,
    set(this: Record<string, unknown>, value: unknown) {
      // As an assignment does: an own property of the object, none on a frozen one.
      if (!Object.isExtensible(this)) return
      Object.defineProperty(this, mark, { value, writable: true, enumerable: true, configurable: true })
      if (!methods.every((method) => typeof this[method] === 'function')) return
      // startGame calls start: only the page's own call is followed.
      let started = false
      for (const method of methods) {
        const original = this[method] as Callable
        const followed = follow('godot', `${callPrefix}${method}`, original)
        this[method] = function (this: unknown, ...args: unknown[]) {
          if (started) return original.apply(this, args)
          started = true
          return followed.apply(this, args)
        }
      }
    },
  })
}

/** Each kind, said once when created and once when refused (null). */
function followWebgl(say: Say): void {
  const page = globalThis as unknown as StartWindow
  const said = new Set<string>()
  for (const type of [page.HTMLCanvasElement, page.OffscreenCanvas]) {
    if (!type) continue
    const getContext = type.prototype.getContext
    type.prototype.getContext = function (this: unknown, ...args: unknown[]) {
      const context = getContext.apply(this, args)
      const kind = String(args[0])
      const key = `${kind} ${context !== null}`
      if (kind.includes('webgl') && !said.has(key)) {
        said.add(key)
        say({ webgl: kind.slice(0, 40), created: context !== null })
      }
      return context
    }
  }
}
