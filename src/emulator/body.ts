// JSON request bodies as the real service reads them: a known length, at most 16 MiB, an object.

import type { IncomingMessage } from 'node:http'
import { ApiError, badBody } from './errors.ts'
import { drain } from './http.ts'

const MAX_BODY_BYTES = 16 * 1024 * 1024

export type JsonObject = Record<string, unknown>

export async function readJsonBody(req: IncomingMessage): Promise<JsonObject> {
  await refuseChunked(req)
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
    // Refused at once, from the declared length: reading it to the end first would cost its transfer.
    throw new ApiError('API_BODY_TOO_LARGE', 'The request body is larger than 16 MiB.', undefined, {
      connection: 'close',
    })
  }
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  if (text.trim() === '') return {}
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw badBody('the body is not valid JSON')
  }
  if (!isJsonObject(parsed)) throw badBody('the body must be a JSON object')
  return parsed
}

/** For routes without a body: a chunked one is still refused, any other is ignored. */
export async function discardBody(req: IncomingMessage): Promise<void> {
  await refuseChunked(req)
  await drain(req)
}

async function refuseChunked(req: IncomingMessage): Promise<void> {
  if (req.headers['transfer-encoding'] !== undefined) {
    await drain(req)
    throw badBody('chunked transfer encoding is not accepted, send the body with a Content-Length')
  }
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function stringField(body: JsonObject, field: string): string {
  const value = body[field]
  if (typeof value !== 'string') throw badBody(`"${field}" must be a string`)
  return value
}

export function numberField(body: JsonObject, field: string): number {
  const value = body[field]
  if (typeof value !== 'number') throw badBody(`"${field}" must be an integer`)
  return value
}
