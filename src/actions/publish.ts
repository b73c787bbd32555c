import { operationAction } from './action.ts'
import { publishOperation } from '../operations/publish.ts'

export const run = operationAction(publishOperation)
