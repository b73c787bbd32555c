// The CLI's flags that are inputs: each subcommand's, from the table of inputs, with the group --help
// lists it in (the README's: required, common, advanced).

import {
  ADVANCED_DEPLOY_INPUTS,
  INPUTS,
  type ActionName,
  type CommandName,
  type FlagSpec,
  type InputRow,
} from '../inputs/table.ts'

/** The rows, in the order of the table. */
const INPUT_ROWS: readonly InputRow[] = Object.values(INPUTS)

/** A flag of the CLI, as its parser and --help need it. */
export interface CliFlag {
  name: string
  type: FlagSpec['type']
  value?: string
  help: string
  negatable?: boolean
  env?: string
  /** Where --help lists it: with the required flags, the common ones, the advanced ones, or the CLI's own. */
  group: FlagGroup
}

export type FlagGroup = 'required' | 'common' | 'advanced' | 'output'

/** The flags of a subcommand that are inputs, in the order of the table. */
export function flagsOf(command: CommandName): CliFlag[] {
  // The close of a preview is a part of the deploy action: its flags are grouped as the deploy's.
  const action: ActionName = command === 'close' ? 'deploy' : command
  return INPUT_ROWS.flatMap((r) => {
    const flag = r.flag
    if (!flag || !(flag.commands ?? r.actions).includes(command)) return []
    const group: FlagGroup = r.requiredIn?.includes(action)
      ? 'required'
      : action === 'deploy' && ADVANCED_DEPLOY_INPUTS.has(r.name)
        ? 'advanced'
        : 'common'
    return [
      {
        name: r.name,
        type: flag.type,
        value: flag.value,
        help: flag.help?.[command] ?? r.description,
        negatable: flag.negatable,
        env: flag.env,
        group,
      },
    ]
  })
}
