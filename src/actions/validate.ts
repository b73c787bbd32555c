// Entry of the validate action (validate/action.yml, bundled to dist/validate/index.js).
import { operationAction } from '../action.ts'
import { validateOperation } from '../validate.ts'

const run = operationAction(validateOperation)
await run()
