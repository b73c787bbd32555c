// Entry of the servers action (servers/action.yml): exports run(), which the bundle's index (dist/servers/index.js,
// made by scripts/package.ts) calls. Nothing runs at import, so `@github/local-action` can run it too.
import { operationAction } from './action.ts'
import { serversOperation } from '../operations/servers.ts'

export const run = operationAction(serversOperation)
