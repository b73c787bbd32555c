// Entry of the lobby-logs action (lobby-logs/action.yml, bundled to dist/lobby-logs/index.js).
import { operationAction } from '../action.ts'
import { lobbyOperation } from '../lobby.ts'

const run = operationAction(lobbyOperation)
await run()
