// What runs in the page, serialised by the browser driver: each function may use nothing from outside
// itself, and casts globalThis to PageWindow, the little of the DOM it uses (the project compiles
// without the DOM library).

import type { Browser } from 'puppeteer-core'
import type { EngineName } from '../collect/engines.ts'

interface PageElement {
  textContent: string | null
  style: { display: string; background: string; backgroundColor: string }
  getBoundingClientRect(): { left: number; top: number; right: number; bottom: number }
}

interface PageWindow {
  document: {
    querySelectorAll(selector: string): Iterable<PageElement>
    getElementById(id: string): PageElement | null
    elementFromPoint(x: number, y: number): PageElement | null
  }
  getComputedStyle(this: void, element: PageElement): { display: string }
  innerWidth: number
  innerHeight: number
  createImageBitmap(this: void, blob: Blob): Promise<{ width: number; height: number }>
  OffscreenCanvas: new (
    width: number,
    height: number,
  ) => {
    getContext(kind: '2d'): {
      drawImage(image: object, ...coordinates: number[]): void
      getImageData(x: number, y: number, width: number, height: number): { data: Uint8ClampedArray }
    } | null
  }
}

export interface EngineReport {
  engine: EngineName
  message: string
}

/**
 * What an engine's page template shows when the game cannot start: Unity's (2020 and later) red banners
 * in #unity-warning (unityShowBanner), Godot's #status-notice (displayFailureNotice).
 */
export function engineReports(): EngineReport[] {
  const { document, getComputedStyle } = globalThis as unknown as PageWindow
  const reports: EngineReport[] = []
  const text = (element: PageElement) => (element.textContent ?? '').replace(/\s+/g, ' ').trim()
  for (const banner of document.querySelectorAll('#unity-warning > div')) {
    if (/red/i.test(banner.style.background || banner.style.backgroundColor) && text(banner))
      reports.push({ engine: 'unity', message: text(banner) })
  }
  const notice = document.getElementById('status-notice')
  if (
    notice &&
    notice.style.display !== 'none' &&
    getComputedStyle(notice).display !== 'none' &&
    text(notice)
  )
    reports.push({ engine: 'godot', message: text(notice) })
  return reports
}

/** The largest canvas in the viewport, clipped to it. */
interface CanvasArea {
  x: number
  y: number
  width: number
  height: number
  /** Viewport points, on a grid over the canvas, where the canvas is what shows. */
  visible: Array<[number, number]>
}

export function largestCanvas(): CanvasArea | undefined {
  const { document, innerWidth, innerHeight } = globalThis as unknown as PageWindow
  let best: (Omit<CanvasArea, 'visible'> & { canvas: PageElement }) | undefined
  for (const canvas of document.querySelectorAll('canvas')) {
    const r = canvas.getBoundingClientRect()
    const x = Math.max(0, r.left)
    const y = Math.max(0, r.top)
    const width = Math.min(innerWidth, r.right) - x
    const height = Math.min(innerHeight, r.bottom) - y
    if (width >= 1 && height >= 1 && (!best || width * height > best.width * best.height))
      best = { x, y, width, height, canvas }
  }
  if (!best) return undefined
  const { canvas, ...rect } = best
  // About 4,000 points at most: what a loading bar or a splash over the canvas leaves of it.
  const step = Math.max(1, Math.ceil(Math.sqrt((rect.width * rect.height) / 4096)))
  const visible: Array<[number, number]> = []
  for (let y = rect.y + step / 2; y < rect.y + rect.height; y += step)
    for (let x = rect.x + step / 2; x < rect.x + rect.width; x += step)
      if (document.elementFromPoint(x, y) === canvas) visible.push([Math.floor(x), Math.floor(y)])
  return { ...rect, visible }
}

export interface CanvasSeen {
  width: number
  height: number
  /** Distinct colours counted where the canvas shows, up to COLOURS_COUNTED; 0 when nothing of it shows. */
  colours: number
  /** The colour of its first pixel that shows, "#rrggbb"; undefined when none does. */
  first?: string
}

/** What the whole screenshot shows: one flat colour is a page that painted nothing. */
export interface PageSeen {
  colours: number
  first: string
}

/** Past this many colours the count stops: it says the canvas drew, not how much. */
const COLOURS_COUNTED = 256

/**
 * The screenshot's colours, all of them and where the canvas shows, decoded by the browser itself in a
 * blank page of its own, out of the game's reach.
 */
export async function countColours(
  browser: Browser,
  png: Buffer,
  area: CanvasArea | undefined,
): Promise<{ page: PageSeen; canvas?: CanvasSeen }> {
  const page = await browser.newPage()
  try {
    const [whole, shown] = await page.evaluate(
      async (base64: string, points: Array<[number, number]> | undefined, most: number) => {
        const { createImageBitmap, OffscreenCanvas } = globalThis as unknown as PageWindow
        const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))
        const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }))
        const canvas = new OffscreenCanvas(bitmap.width, bitmap.height)
        const context = canvas.getContext('2d')!
        context.drawImage(bitmap, 0, 0)
        const data = context.getImageData(0, 0, bitmap.width, bitmap.height).data
        const hex = (n: number) => `#${n.toString(16).padStart(6, '0')}`
        const count = (offsets: Iterable<number>) => {
          const seen = new Set<number>()
          let first: number | undefined
          for (const i of offsets) {
            const colour = (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!
            first ??= colour
            seen.add(colour)
            if (seen.size >= most) break
          }
          return { colours: seen.size, first: first === undefined ? undefined : hex(first) }
        }
        function* all() {
          for (let i = 0; i < data.length; i += 4) yield i
        }
        function* at(list: Array<[number, number]>) {
          for (const [x, y] of list)
            if (x < bitmap.width && y < bitmap.height) yield (y * bitmap.width + x) * 4
        }
        return [count(all()), points && count(at(points))] as const
      },
      png.toString('base64'),
      area?.visible,
      COLOURS_COUNTED,
    )
    const canvas = area &&
      shown && { width: Math.floor(area.width), height: Math.floor(area.height), ...shown }
    return { page: { colours: whole.colours, first: whole.first ?? '#000000' }, canvas }
  } finally {
    await page.close().catch(() => undefined)
  }
}
