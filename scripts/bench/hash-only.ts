// The hashing phase of the deploy alone: collect (the scan: list, open, fstat), SHA-256, content
// types, manifest. It reports the phase's own duration and the scan's part of it: the start-up of a
// process is measured once, on its own, by the benchmark.
import { parseArgs } from 'node:util'
import { buildManifest, hashArtifacts } from '../../src/deploy/files.ts'
import { scanArtifacts } from '../../src/deploy/scan.ts'
import { memoryLogger } from '../../src/common/logger.ts'

const { values } = parseArgs({ options: { path: { type: 'string' } } })
const started = performance.now()
const files = await scanArtifacts({
  root: values.path!,
  patterns: ['**'],
  includeHidden: false,
  logger: memoryLogger(),
})
const scanMs = performance.now() - started
const manifest = buildManifest(files, await hashArtifacts(files))
const ms = performance.now() - started
console.log(JSON.stringify({ ms, scanMs, files: manifest.fileCount, bytes: manifest.totalBytes }))
