// The CLI checks of issue 36 through the committed bundle (dist/cli/index.js) on this Node; the same
// through the packed tarball on Node 20 are in cli-tarball.test.ts.
import path from 'node:path'
import { root } from '../support/actions.ts'
import { cliChecks } from '../support/cli-checks.ts'

cliChecks('dist/cli/index.js', () => ({ node: process.execPath, cli: path.join(root, 'dist/cli/index.js') }))
