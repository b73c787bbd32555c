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
 * What a game engine's page template shows when the game cannot start. Unity's WebGL template (2020
 * and later) shows its loader's errors as red banners in #unity-warning (unityShowBanner, type
 * 'error'), and alert()s what createUnityInstance rejected with; Godot's web export shows a start-up
 * failure in #status-notice (displayFailureNotice).
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

export interface Rect {
  x: number
  y: number
  width: number
  height: number
}

/** The largest canvas in the viewport, clipped to it; undefined when the page shows none. */
export function largestCanvas(): Rect | undefined {
  const { document, innerWidth, innerHeight } = globalThis as unknown as PageWindow
  let best: Rect | undefined
  for (const canvas of document.querySelectorAll('canvas')) {
    const r = canvas.getBoundingClientRect()
    const x = Math.max(0, r.left)
    const y = Math.max(0, r.top)
    const width = Math.min(innerWidth, r.right) - x
    const height = Math.min(innerHeight, r.bottom) - y
    if (width >= 1 && height >= 1 && (!best || width * height > best.width * best.height))
      best = { x, y, width, height }
  }
  return best
}

export interface CanvasSeen {
  width: number
  height: number
  /** Distinct colours counted, up to COLOURS_COUNTED. */
  colours: number
  /** The colour of its first pixel, "#rrggbb". */
  first: string
}

/** Past this many colours the count stops: it says the canvas drew, not how much. */
const COLOURS_COUNTED = 256

/**
 * Whether a canvas drew anything: the screenshot's pixels inside it, decoded by the browser itself (in
 * a blank page of its own, out of the game's reach), are one flat colour or not.
 */
export async function countColours(browser: Browser, png: Buffer, rect: Rect): Promise<CanvasSeen> {
  const page = await browser.newPage()
  try {
    return await page.evaluate(
      async (base64: string, area: Rect, most: number) => {
        const { createImageBitmap, OffscreenCanvas } = globalThis as unknown as PageWindow
        const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))
        const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }))
        const x = Math.floor(area.x)
        const y = Math.floor(area.y)
        const width = Math.max(1, Math.min(bitmap.width - x, Math.floor(area.width)))
        const height = Math.max(1, Math.min(bitmap.height - y, Math.floor(area.height)))
        const canvas = new OffscreenCanvas(width, height)
        const context = canvas.getContext('2d')!
        context.drawImage(bitmap, x, y, width, height, 0, 0, width, height)
        const data = context.getImageData(0, 0, width, height).data
        const seen = new Set<number>()
        for (let i = 0; i < data.length && seen.size < most; i += 4)
          seen.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!)
        const first = (data[0]! << 16) | (data[1]! << 8) | data[2]!
        return { width, height, colours: seen.size, first: `#${first.toString(16).padStart(6, '0')}` }
      },
      png.toString('base64'),
      rect,
      COLOURS_COUNTED,
    )
  } finally {
    await page.close().catch(() => undefined)
  }
}
