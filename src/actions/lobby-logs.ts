import { operationAction } from './action.ts'
import { lobbyOperation } from '../operations/lobby.ts'

export const run = operationAction(lobbyOperation)
