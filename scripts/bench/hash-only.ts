// The hashing phase of the deploy alone: collect, stat, SHA-256, content types, manifest. It reports
// the phase's own duration: the start-up of a process is measured once, on its own, by the benchmark.
import { parseArgs } from 'node:util'
import { collectArtifacts } from '../../src/deploy/files.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { actionsGlob as glob } from '../../src/actions/glob.ts'

const { values } = parseArgs({ options: { path: { type: 'string' } } })
const started = performance.now()
const manifest = await collectArtifacts({
  glob,
  root: values.path!,
  patterns: ['**'],
  includeHidden: false,
  logger: memoryLogger(),
})
const ms = performance.now() - started
console.log(JSON.stringify({ ms, files: manifest.fileCount, bytes: manifest.totalBytes }))
