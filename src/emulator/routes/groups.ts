// POST /cloud/groups/validate: needs a valid token, no particular game.

import { groupDisplayNameProblems } from '../../api/rules.ts'
import { stringField } from '../body.ts'
import type { ApiRoute } from '../core.ts'

export const validateGroup: ApiRoute = {
  method: 'POST',
  pattern: '/cloud/groups/validate',
  handle(context) {
    const displayName = stringField(context.body, 'display_name')
    const problems = groupDisplayNameProblems(displayName)
    if (context.core.state.isGroupNameTaken(displayName)) problems.push(['not-unique'])
    return { errors: problems.map((path) => ({ path })) }
  },
}
