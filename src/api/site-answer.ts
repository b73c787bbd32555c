import { JSONParser, TokenType, type ParsedElementInfo, type ParsedTokenInfo } from '@streamparser/json'
import { PresignedRequestList } from './presigned.ts'
import { aNumber, aString, anId, listOf, objectOf, type ShapeCheck } from './shape.ts'
import type { PresignedRequest } from './types.ts'

/** A created site as the client gives it: its presigned requests in a compact list. */
export interface CdnSite {
  site_id: string
  upload_id: string
  presigned_requests: PresignedRequestList
}

/**
 * An answer read as it arrives. `end` gives the value read (undefined when the bytes were not a
 * JSON object), or the problem found in a part of it that was not kept.
 */
export interface AnswerStream {
  write(chunk: Buffer): void
  end(): { value: unknown } | { problem: string }
}

const aRequest = objectOf({ path: aString, url: aString, byte_offset: aNumber, content_length: aNumber })

/** The shape of the site answer once read: its list, or what stood where the list should be. */
export const siteAnswer: ShapeCheck = objectOf({
  site_id: anId,
  upload_id: anId,
  presigned_requests: (value, at) =>
    value instanceof PresignedRequestList ? undefined : listOf(aRequest)(value, at),
})

/**
 * Reads createGameCdnSite's answer as it arrives: each presigned request is checked and moved into
 * a PresignedRequestList as soon as its object is complete, so neither the answer's whole text
 * nor one object per request is ever held.
 */
export function siteAnswerStream(): AnswerStream {
  const requests = new PresignedRequestList()
  const top: Record<string, unknown> = {}
  let problem: string | undefined
  let failed = false
  // Where the tokens are: enough to tell what the top-level value and its presigned_requests are,
  // which the parser does not say of values it does not keep.
  let depth = 0
  let topToken: TokenType | undefined
  let key: string | undefined
  let afterColon = false
  let listToken: ParsedTokenInfo | undefined

  const parser = new JSONParser({
    paths: ['$.presigned_requests.*', '$.site_id', '$.upload_id'],
    keepStack: false,
  })
  parser.onToken = (info) => {
    const { token } = info
    if (depth === 0 && topToken === undefined) topToken = token
    if (depth === 1) {
      if (token === TokenType.COLON) afterColon = true
      else if (afterColon) {
        if (key === 'presigned_requests') listToken = info
        afterColon = false
      } else if (token === TokenType.STRING) key = info.value as string
    }
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) depth++
    else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) depth--
  }
  parser.onValue = ({ value, key: at, stack }: ParsedElementInfo) => {
    if (stack.length === 1) {
      top[at as string] = value
    } else if (problem === undefined && listToken?.token === TokenType.LEFT_BRACKET) {
      problem = aRequest(value, `presigned_requests[${String(at)}]`)
      if (problem === undefined) requests.push(value as unknown as PresignedRequest)
    }
  }
  parser.onError = () => {
    failed = true
  }

  return {
    write(chunk) {
      if (!failed) parser.write(chunk)
    },
    end() {
      if (!failed && !parser.isEnded) parser.end()
      if (failed || topToken !== TokenType.LEFT_BRACE) return { value: undefined }
      if (problem !== undefined) return { problem }
      top.presigned_requests = standIn(listToken, requests)
      return { value: top }
    },
  }
}

/** What stood where the list should be: the list read, or a value that the shape check can name. */
function standIn(token: ParsedTokenInfo | undefined, requests: PresignedRequestList): unknown {
  if (token === undefined) return undefined
  if (token.token === TokenType.LEFT_BRACKET) return requests
  if (token.token === TokenType.LEFT_BRACE) return {}
  return token.value
}
