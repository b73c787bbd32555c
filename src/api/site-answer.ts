import { PresignedRequestList } from './presigned.ts'
import { aNumber, aString, anId, listOf, objectOf, type ShapeCheck } from './shape.ts'
import type { PresignedRequest } from './types.ts'

/** A created site as the client gives it: its presigned requests in a PresignedRequestList. */
export interface CdnSite {
  site_id: string
  upload_id: string
  presigned_requests: PresignedRequestList
}

/** A created site as the service answers it. */
export interface CdnSiteAnswer {
  site_id: string
  upload_id: string
  presigned_requests: PresignedRequest[]
}

const aRequest = objectOf({ path: aString, url: aString, byte_offset: aNumber, content_length: aNumber })

/** The shape of the site answer. */
export const siteAnswer: ShapeCheck = objectOf({
  site_id: anId,
  upload_id: anId,
  presigned_requests: listOf(aRequest),
})

export function cdnSiteOf(answer: CdnSiteAnswer): CdnSite {
  return { ...answer, presigned_requests: PresignedRequestList.of(answer.presigned_requests) }
}
