// The object store behind the presigned URLs (its own origin): PUT of one file or part, refused the
// way S3 refuses.

import type { IncomingMessage, ServerResponse } from 'node:http'
import { setTimeout as delay } from 'node:timers/promises'
import type { EmulatorCore } from './core.ts'
import { drain, sendText } from './http.ts'

export interface StoreRefusal {
  status: number
  code: string
  message: string
}

function signatureMismatch(message: string): StoreRefusal {
  return { status: 403, code: 'SignatureDoesNotMatch', message }
}

export async function handleStorePut(
  core: EmulatorCore,
  req: IncomingMessage,
  res: ServerResponse,
  rawPath: string,
  query: URLSearchParams,
  rayId: string,
): Promise<void> {
  const verified = await core.signer.verify(rawPath, query, req.headers, core.options.now())
  if ('refused' in verified) {
    const refusal =
      verified.refused === 'expired'
        ? { status: 403, code: 'AccessDenied', message: 'Request has expired' }
        : signatureMismatch(
            'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
          )
    return refuse(req, res, refusal, rayId)
  }
  const { target } = verified
  const site = core.state.siteByUpload(target.uploadId)
  const part = site?.parts.find(
    (candidate) => candidate.path === target.path && candidate.index === target.partIndex,
  )
  if (!site || !part) {
    return refuse(
      req,
      res,
      { status: 404, code: 'NoSuchUpload', message: 'The specified upload does not exist.' },
      rayId,
    )
  }
  if (site.completed || site.completing) {
    return refuse(
      req,
      res,
      { status: 403, code: 'AccessDenied', message: 'The upload is already complete.' },
      rayId,
    )
  }
  // Content-Length and Content-Type were checked by the signature: both are signed.
  const claims = { contentLength: part.contentLength }

  // Faults only ever hit a PUT the store accepts: every refusal above comes first.
  const fault = core.faults.decidePut(req, claims.contentLength)
  if (fault === 'stall') return core.faults.holdStalled(res)
  if (fault === 'reset') return resetMidBody(req, res, claims.contentLength)
  if (fault === 'error') {
    return refuse(
      req,
      res,
      { status: 503, code: 'SlowDown', message: 'Please reduce your request rate.' },
      rayId,
    )
  }
  const md5 = await core.storage.writePart(
    site.uploadId,
    part.fileIndex,
    part.index,
    req,
    claims.contentLength,
    // Corrupted "in transit": the byte in the middle of the part is flipped before it is stored.
    fault === 'wrong-etag' ? Math.floor(claims.contentLength / 2) : undefined,
  )
  if (md5 === undefined) {
    // The client went away before sending every byte: there is nobody left to answer.
    res.destroy()
    return
  }
  part.md5 = md5
  if (core.options.putLatencyMs > 0) await delay(core.options.putLatencyMs)
  res.writeHead(200, { etag: `"${md5}"`, 'content-length': 0 })
  res.end()
}

/**
 * Reads about half of the body (at least 1 byte of a non-empty one), discarding it, then destroys
 * the connection without an answer. Resolves once the connection is closed.
 */
function resetMidBody(req: IncomingMessage, res: ServerResponse, contentLength: number): Promise<void> {
  const cutAfter = contentLength > 0 ? Math.max(1, Math.floor(contentLength / 2)) : 0
  return new Promise((resolve) => {
    res.once('close', () => resolve())
    if (res.destroyed || res.socket === null || res.socket.destroyed) {
      resolve()
      return
    }
    if (cutAfter === 0) {
      res.destroy()
      return
    }
    let received = 0
    req.on('data', (chunk: Buffer) => {
      received += chunk.length
      if (received >= cutAfter) res.destroy()
    })
  })
}

/** Answers S3's XML error body, after reading what is left of the request. */
export async function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  refusal: StoreRefusal,
  rayId: string,
): Promise<void> {
  await drain(req)
  const xml =
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<Error><Code>${refusal.code}</Code><Message>${escapeXml(refusal.message)}</Message>` +
    `<RequestId>${rayId}</RequestId></Error>`
  sendText(res, refusal.status, xml, 'application/xml')
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`)
}
