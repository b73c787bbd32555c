// The hashing phase of the deploy alone: collect (the scan: list, open, fstat), SHA-256, content
// types, manifest. It reports the phase's own duration and the scan's part of it: the start-up of a
// process is measured once, on its own, by the benchmark.
import { parseArgs } from 'node:util'
import { buildManifest } from '../../src/deploy/collect/files.ts'
import { hashArtifacts } from '../../src/deploy/collect/hash.ts'
import { scanSite } from '../../src/deploy/collect/scan.ts'
import { memoryLogger } from '../../src/common/logger.ts'

const { values } = parseArgs({ options: { path: { type: 'string' } } })
const started = performance.now()
const { files } = await scanSite({
  root: values.path!,
  patterns: ['**'],
  includeHidden: false,
  logger: memoryLogger(),
})
const scanMs = performance.now() - started
const manifest = buildManifest(files, await hashArtifacts(files))
const ms = performance.now() - started
console.log(JSON.stringify({ ms, scanMs, files: manifest.fileCount, bytes: manifest.totalBytes }))
