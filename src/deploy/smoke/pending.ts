// The requests not ended when the watch ended, and how many bytes of each arrived: a build stalled on
// its data file looks started (its page drew its first frame) but is not.

import type { CDPSession } from 'puppeteer-core'

export interface Progress {
  url: string
  bytes: number
  /** Its Content-Length, when its answer said one. */
  total?: number
  started: number
}

/**
 * How far the last request of a URL got. Whether it ended is the driver's to say: a worker's script is
 * begun by the page but ends in the worker, which this session does not hear.
 */
export async function followRequests(
  cdp: CDPSession,
  now: () => number,
): Promise<(url: string) => Progress | undefined> {
  const open = new Map<string, Progress>()
  let mainFrame: string | undefined
  cdp.on('Network.requestWillBeSent', ({ requestId, loaderId, frameId, type, request }) => {
    // A new document in the main frame: the page that began the others is gone (some never report an end).
    if (type === 'Document' && requestId === loaderId && (mainFrame ??= frameId) === frameId) open.clear()
    const redirected = open.get(requestId)
    open.set(requestId, { url: request.url, bytes: 0, started: redirected?.started ?? now() })
  })
  cdp.on('Network.responseReceived', ({ requestId, response }) => {
    const request = open.get(requestId)
    const length = Number(
      Object.entries(response.headers).find(([name]) => name.toLowerCase() === 'content-length')?.[1],
    )
    if (request && Number.isFinite(length)) request.total = length
  })
  cdp.on('Network.dataReceived', ({ requestId, dataLength, encodedDataLength }) => {
    const request = open.get(requestId)
    if (request) request.bytes += encodedDataLength || dataLength
  })
  cdp.on('Network.loadingFinished', ({ requestId }) => void open.delete(requestId))
  cdp.on('Network.loadingFailed', ({ requestId }) => void open.delete(requestId))
  await cdp.send('Network.enable')
  return (url) => [...open.values()].findLast((request) => request.url === url)
}
