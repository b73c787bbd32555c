// Entry of the avatars action (avatars/action.yml): exports run(), which the bundle's index (dist/avatars/index.js,
// made by scripts/package.ts) calls. Nothing runs at import, so `@github/local-action` can run it too.
import { operationAction } from './action.ts'
import { avatarsOperation } from '../operations/avatars.ts'

export const run = operationAction(avatarsOperation)
