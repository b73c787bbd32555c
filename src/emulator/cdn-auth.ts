// The CDN's basic auth: a private namespace's hosts answer 401 (realm RivetCdn) to a request without
// the credentials of one of the users its config applies, checked against their bcrypt hashes.

import { createHash } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import bcrypt from 'bcryptjs'
import { drain, sendText } from './http.ts'
import type { CdnAuth } from './state.ts'

export const CDN_AUTH_REALM = 'RivetCdn'

/** Hash and password pairs already compared: bcrypt costs tens of milliseconds per request otherwise. */
const compared = new Map<string, boolean>()
const COMPARED_MAX = 1024

/** Whether the request may see what the namespace serves. */
export async function cdnAuthorized(auth: CdnAuth, header: string | undefined): Promise<boolean> {
  if (auth.type !== 'basic') return true
  const match = /^basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '')
  if (!match) return false
  const credentials = Buffer.from(match[1]!, 'base64').toString('utf8')
  const colon = credentials.indexOf(':')
  if (colon < 0) return false
  const user = credentials.slice(0, colon)
  const password = credentials.slice(colon + 1)
  const hash = auth.users.find(([name]) => name === user)?.[1]
  return hash !== undefined && (await matches(password, hash))
}

async function matches(password: string, hash: string): Promise<boolean> {
  const key = `${hash}\0${createHash('sha256').update(password).digest('hex')}`
  const known = compared.get(key)
  if (known !== undefined) return known
  const result = await bcrypt.compare(password, hash)
  if (compared.size >= COMPARED_MAX) compared.clear()
  compared.set(key, result)
  return result
}

/** The CDN's answer to a request without valid credentials. */
export async function sendUnauthorized(req: IncomingMessage, res: ServerResponse): Promise<void> {
  await drain(req)
  sendText(res, 401, '401 Unauthorized\n', undefined, {
    'www-authenticate': `Basic realm="${CDN_AUTH_REALM}"`,
  })
}
