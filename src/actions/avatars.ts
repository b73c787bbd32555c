import { operationAction } from './action.ts'
import { avatarsOperation } from '../operations/avatars.ts'

export const run = operationAction(avatarsOperation)
