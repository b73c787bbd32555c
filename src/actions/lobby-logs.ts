// Entry of the lobby-logs action: run() is called by dist/lobby-logs/index.js (scripts/package.ts); nothing runs at import.
import { operationAction } from './action.ts'
import { lobbyOperation } from '../operations/lobby.ts'

export const run = operationAction(lobbyOperation)
