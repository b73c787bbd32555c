// The build's digest before anything is created, for a dry run and for skip-unchanged; otherwise the
// files are hashed from the bytes the upload sends (upload/integrity.ts).
import { createHash } from 'node:crypto'
import pLimit from 'p-limit'
import type { ArtifactFile } from './files.ts'
import { streamScanned, type OpenFile } from './read.ts'

const HASHED_AT_ONCE = 8

async function hashFile(file: ArtifactFile, openWith?: OpenFile): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of streamScanned(file, 0, file.size, openWith)) hash.update(chunk)
  return hash.digest('hex')
}

/** The SHA-256 of each file, by index. */
export function hashArtifacts(files: readonly ArtifactFile[], openWith?: OpenFile): Promise<string[]> {
  const limit = pLimit(HASHED_AT_ONCE)
  return Promise.all(files.map((file) => limit(() => hashFile(file, openWith))))
}
