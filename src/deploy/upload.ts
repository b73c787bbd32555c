// The upload of a site's parts to their presigned URLs. Its pieces, each a module of its own:
// upload/plan.ts pairs requests with files; upload/scheduler.ts starts parts under the adaptive limit;
// upload/send.ts sends one part (its body from upload/body.ts, its PUT from upload/put.ts) and says
// what came of it; upload/outcome.ts's table decides what follows; upload/watchdog.ts aborts the PUTs
// that stall; upload/run.ts ties them together for one upload.
import { planUpload } from './upload/plan.ts'
import { UploadRun, type UploadOptions, type UploadResult } from './upload/run.ts'

export { PartUploadError } from './upload/outcome.ts'
export { planUpload, type BytesFile, type Part, type UploadFile, type UploadPlan } from './upload/plan.ts'
export type { UploadOptions, UploadResult } from './upload/run.ts'

/** Uploads every presigned part with bounded concurrency; each file's SHA-256 is the one of the bytes sent. */
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
