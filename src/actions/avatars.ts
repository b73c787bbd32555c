// Entry of the avatars action: run() is called by dist/avatars/index.js (scripts/package.ts); nothing runs at import.
import { operationAction } from './action.ts'
import { avatarsOperation } from '../operations/avatars.ts'

export const run = operationAction(avatarsOperation)
