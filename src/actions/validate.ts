// Entry of the validate action (validate/action.yml): exports run(), which the bundle's index (dist/validate/index.js,
// made by scripts/package.ts) calls. Nothing runs at import, so `@github/local-action` can run it too.
import { operationAction } from './action.ts'
import { validateOperation } from '../operations/validate.ts'

export const run = operationAction(validateOperation)
