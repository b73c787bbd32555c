import { ADVANCED_DEPLOY_INPUTS, INPUTS, type CommandName, type FlagSpec } from '../inputs/table.ts'

/** An input's, or one of the CLI's own. */
export interface Flag {
  name: string
  type: FlagSpec['type']
  value?: string
  help: string
  negatable?: boolean
  env?: string
  group: FlagGroup
}

export type FlagGroup = 'required' | 'common' | 'advanced' | 'output'

export function flagsOf(command: CommandName): Flag[] {
  // The close of a preview is a part of the deploy action: its flags are grouped as the deploy's.
  const action = command === 'close' ? 'deploy' : command
  return Object.values(INPUTS).flatMap((row) => {
    const { flag } = row
    if (!flag || !(flag.commands ?? row.actions).includes(command)) return []
    const group: FlagGroup = row.requiredIn?.includes(action)
      ? 'required'
      : action === 'deploy' && ADVANCED_DEPLOY_INPUTS.has(row.name)
        ? 'advanced'
        : 'common'
    const { type, value, negatable, env } = flag
    return [
      { name: row.name, type, value, help: flag.help?.[command] ?? row.description, negatable, env, group },
    ]
  })
}
