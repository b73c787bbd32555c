// The upload of a site's parts to their presigned URLs; its pieces are in upload/.
import { planUpload } from './upload/plan.ts'
import { UploadRun, type UploadOptions, type UploadResult } from './upload/run.ts'

export { PartUploadError } from './upload/outcome.ts'
export { planUpload, type BytesFile, type Part, type UploadFile, type UploadPlan } from './upload/plan.ts'
export type { UploadOptions, UploadResult } from './upload/run.ts'

export async function uploadParts(options: UploadOptions): Promise<UploadResult> {
  options.signal?.throwIfAborted()
  const { requests } = options
  const plan = planUpload(options.files, requests)
  const started = options.retry.now()
  const run = new UploadRun(options, requests, plan)
  const sha256 = await run.sendAll()
  return {
    parts: plan.parts.length,
    bytes: options.files.reduce((sum, f) => sum + f.size, 0),
    retries: run.retries,
    durationMs: options.retry.now() - started,
    sha256,
  }
}
