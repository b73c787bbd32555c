import { operationAction } from './action.ts'
import { validateOperation } from '../operations/validate.ts'

export const run = operationAction(validateOperation)
