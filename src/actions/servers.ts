import { operationAction } from './action.ts'
import { serversOperation } from '../operations/servers.ts'

export const run = operationAction(serversOperation)
