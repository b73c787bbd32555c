// Each action's entry exports run(), which its bundle's index calls (scripts/package.ts): nothing runs
// at import, so `@github/local-action` can run it too.
import { UsageError } from '../api/errors.ts'
import { sweepOperation } from '../operations/sweep.ts'
import { operationAction } from './action.ts'
import { readEvent } from './event.ts'
import { actionsSweepGitHub } from './retired.ts'

export const run = operationAction(
  sweepOperation((inputs) => {
    const event = readEvent(process.env, undefined)
    const { repository } = event
    if (!repository) {
      throw new UsageError(
        'GITHUB_REPOSITORY is not set: the sweep asks GitHub about the pull requests of the repository it runs in',
      )
    }
    return actionsSweepGitHub({
      token: inputs.githubToken,
      event: { ...event, repository },
      connection: inputs,
    })
  }),
)
