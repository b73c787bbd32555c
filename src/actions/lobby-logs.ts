// Entry of the lobby-logs action (lobby-logs/action.yml): exports run(), which the bundle's index (dist/lobby-logs/index.js,
// made by scripts/package.ts) calls. Nothing runs at import, so `@github/local-action` can run it too.
import { operationAction } from './action.ts'
import { lobbyOperation } from '../operations/lobby.ts'

export const run = operationAction(lobbyOperation)
