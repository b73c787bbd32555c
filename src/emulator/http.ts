// Small helpers over node:http requests and responses.

import type { IncomingMessage, ServerResponse } from 'node:http'

export interface RequestTarget {
  /** The raw path, without the query string. */
  path: string
  query: URLSearchParams
}

export function requestTarget(rawUrl: string | undefined): RequestTarget {
  const url = rawUrl ?? '/'
  const queryStart = url.indexOf('?')
  if (queryStart < 0) return { path: url, query: new URLSearchParams() }
  return { path: url.slice(0, queryStart), query: new URLSearchParams(url.slice(queryStart + 1)) }
}

/** Decoded path segments, or undefined when a segment is not valid percent-encoding. */
export function pathSegments(path: string): string[] | undefined {
  try {
    return path.split('/').slice(1).map(decodeURIComponent)
  } catch {
    return undefined
  }
}

/**
 * Reads and discards what is left of the request body. Answering before the client finished sending
 * makes many clients report a broken connection instead of the answer.
 */
export async function drain(req: IncomingMessage): Promise<void> {
  if (req.complete || req.destroyed) return
  await new Promise<void>((resolve) => {
    req.once('end', resolve)
    req.once('close', resolve)
    req.once('error', () => resolve())
    req.resume()
  })
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  })
  res.end(text)
}

export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  contentType = 'text/plain; charset=utf-8',
  headers: Record<string, string> = {},
) {
  res.writeHead(status, {
    ...headers,
    'content-type': contentType,
    'content-length': Buffer.byteLength(text),
  })
  res.end(res.req.method === 'HEAD' ? undefined : text)
}
