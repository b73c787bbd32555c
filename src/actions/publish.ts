// Entry of the publish action: run() is called by dist/publish/index.js (scripts/package.ts); nothing runs at import.
import { operationAction } from './action.ts'
import { publishOperation } from '../operations/publish.ts'

export const run = operationAction(publishOperation)
