// The upload of a site's parts to their presigned URLs; its pieces are in upload/.
export { PartUploadError } from './upload/outcome.ts'
export { planUpload, type BytesFile } from './upload/plan.ts'
export { uploadParts, type UploadOptions, type UploadResult } from './upload/run.ts'
