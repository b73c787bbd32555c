// Entry of the avatars action (avatars/action.yml, bundled to dist/avatars/index.js).
import { operationAction } from '../action.ts'
import { avatarsOperation } from '../avatars.ts'

const run = operationAction(avatarsOperation)
await run()
