// Whether a canvas drew anything: the screenshot's pixels inside the canvas, decoded by the browser
// itself (in a blank page of its own, out of the game's reach), are one flat colour or not.

import type { Browser } from 'puppeteer-core'
import type { PageWindow } from './page-dom.ts'

export interface CanvasSeen {
  width: number
  height: number
  /** Distinct colours counted, up to COLOURS_COUNTED. */
  colours: number
  /** The colour of its first pixel, "#rrggbb". */
  first: string
}

export interface Rect {
  x: number
  y: number
  width: number
  height: number
}

/** Past this many colours the count stops: it says the canvas drew, not how much. */
export const COLOURS_COUNTED = 256

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
