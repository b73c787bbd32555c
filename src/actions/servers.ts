// Entry of the servers action (servers/action.yml, bundled to dist/servers/index.js).
import { operationAction } from '../action.ts'
import { serversOperation } from '../servers.ts'

const run = operationAction(serversOperation)
await run()
