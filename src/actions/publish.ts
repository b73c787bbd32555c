// Entry of the publish action (publish/action.yml): exports run(), which the bundle's index (dist/publish/index.js,
// made by scripts/package.ts) calls. Nothing runs at import, so `@github/local-action` can run it too.
import { operationAction } from './action.ts'
import { publishOperation } from '../operations/publish.ts'

export const run = operationAction(publishOperation)
