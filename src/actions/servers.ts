// Entry of the servers action: run() is called by dist/servers/index.js (scripts/package.ts); nothing runs at import.
import { operationAction } from './action.ts'
import { serversOperation } from '../operations/servers.ts'

export const run = operationAction(serversOperation)
