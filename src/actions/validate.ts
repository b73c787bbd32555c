// Entry of the validate action: run() is called by dist/validate/index.js (scripts/package.ts); nothing runs at import.
import { operationAction } from './action.ts'
import { validateOperation } from '../operations/validate.ts'

export const run = operationAction(validateOperation)
