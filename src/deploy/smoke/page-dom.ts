// The little of the DOM that the functions run in the page use (the project compiles without the DOM
// library): each casts globalThis to PageWindow itself, as a function the browser runs can use no import.

export interface PageElement {
  textContent: string | null
  style: { display: string; background: string; backgroundColor: string }
  getBoundingClientRect(): { left: number; top: number; right: number; bottom: number }
}

export interface PageWindow {
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
