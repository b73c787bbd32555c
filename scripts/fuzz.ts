// npm run fuzz: the property tests of __tests__/properties/ and the walk's selection against
// @actions/glob's (glob.test.ts) at 300 runs a property (GAMEHOST_FUZZ_RUNS overrides it; arguments go
// to node --test, say --test-name-pattern=faults). The runs are set here, not on npm's command line, so
// that the script works in every shell.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const GLOB = '__tests__/deploy/collect/glob.test.ts'
const { status } = spawnSync(
  process.execPath,
  ['--test', '--test-reporter=spec', ...process.argv.slice(2), '__tests__/properties/*.test.ts', GLOB],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, GAMEHOST_FUZZ_RUNS: process.env.GAMEHOST_FUZZ_RUNS ?? '300' },
  },
)
process.exit(status ?? 1)
