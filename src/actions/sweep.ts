// Entry of the sweep action (sweep/action.yml): exports run(), which the bundle's index (dist/sweep/index.js,
// made by scripts/package.ts) calls. Nothing runs at import, so `@github/local-action` can run it too.
// GitHub is asked here (retired.ts): which pull requests are open, and, for each preview retired, what
// the `closed` run does on GitHub (the sticky comment, the deployments made inactive).
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
