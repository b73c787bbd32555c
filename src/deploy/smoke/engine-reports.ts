// What a game engine's page template shows when the game cannot start, read from the page at the end
// of a smoke test. Unity's WebGL template (2020 and later) shows its loader's errors as red banners in
// #unity-warning (unityShowBanner, type 'error'), and alert()s what createUnityInstance rejected with;
// Godot's web export shows a start-up failure in #status-notice (displayFailureNotice).

import type { PageElement, PageWindow } from './page-dom.ts'

export interface EngineReport {
  engine: 'unity' | 'godot'
  message: string
}

/** Runs in the page (serialised by the browser driver): it may use nothing from outside itself. */
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
