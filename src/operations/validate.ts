import { ValidationFailedError, type ValidationProblem } from '../api/errors.ts'
import { describeValidationPath, validationTitle } from '../api/rules.ts'
import {
  namedInputs,
  readBoolean,
  readMatchmakerPair,
  readOptional,
  readOptionalId,
  readRequiredConnection,
  usage,
  type Connection,
} from '../inputs/common.ts'
import { ActionName, Input, ValidateOutput } from '../inputs/constants.ts'
import type { Operation } from './operation.ts'
import { heading, keyValueTable, table, type ReportBlock } from '../common/report.ts'
import { inputName } from '../common/input-naming.ts'
import { plural } from '../common/format.ts'

type Validation = 'matchmaker-config' | 'group-display-name'

interface ValidateInputs extends Connection {
  matchmaker: { namespaceId: string; lobbyCountMax: number; maxPlayers: number } | undefined
  groupDisplayName: string | undefined
  failOnError: boolean
}

interface ValidateError {
  path: string[]
  validation: Validation
  message: string
}

type ValidateResult = Pick<ValidateInputs, 'matchmaker' | 'groupDisplayName'> & { errors: ValidateError[] }

export const validateOperation: Operation<ValidateInputs, ValidateResult> = {
  name: ActionName.Validate,

  read(get, options) {
    const connection = readRequiredConnection(get, options)
    const namespaceId = readOptionalId(get, Input.NamespaceId)
    const groupDisplayName = readOptional(get, Input.GroupDisplayName)
    const pair = readMatchmakerPair(
      get,
      Boolean(namespaceId),
      namedInputs('{namespace-id}: the service validates a matchmaker config against a namespace'),
    )
    const matchmaker = pair && namespaceId ? { namespaceId, ...pair } : undefined
    if (!pair && namespaceId)
      throw usage`{namespace-id} is only used with {lobby-count-max} and {max-players}, which are empty`
    if (!matchmaker && groupDisplayName === undefined)
      throw usage`{group-display-name}, or {lobby-count-max} and {max-players} with {namespace-id}: give at least one, there is nothing to validate`
    return {
      ...connection,
      matchmaker,
      groupDisplayName,
      failOnError: readBoolean(get, Input.FailOnError),
    }
  },

  async run(inputs, run, journal) {
    const errors: ValidateError[] = []
    const found = (validation: Validation, paths: ReadonlyArray<{ path: string[] }>) =>
      errors.push(...paths.map(({ path }) => ({ path, validation, message: describeValidationPath(path) })))
    const { matchmaker, groupDisplayName } = inputs
    if (matchmaker) {
      const answer = await run.client.validateMatchmakerConfig(inputs.gameId, matchmaker.namespaceId, {
        lobby_count_max: matchmaker.lobbyCountMax,
        max_players: matchmaker.maxPlayers,
      })
      found('matchmaker-config', answer.errors)
      journal.push('matchmaker config validated')
      run.logger.info(
        `Matchmaker config (lobby_count_max ${matchmaker.lobbyCountMax}, max_players ${matchmaker.maxPlayers}, ` +
          `namespace ${matchmaker.namespaceId}): ${verdict(answer.errors.length)}`,
      )
    }
    if (groupDisplayName !== undefined) {
      const answer = await run.client.validateGroup(groupDisplayName)
      found('group-display-name', answer.errors)
      journal.push('group display name validated')
      run.logger.info(`Group display name '${groupDisplayName}': ${verdict(answer.errors.length)}`)
    }
    if (!inputs.failOnError)
      for (const problem of problems(errors))
        run.logger.warning(problem.description, { title: problem.title })
    return { matchmaker, groupDisplayName, errors }
  },

  outputs(result) {
    return { [ValidateOutput.Errors]: result.errors, [ValidateOutput.Valid]: result.errors.length === 0 }
  },

  report(result) {
    const rows: Array<[string, string]> = []
    const count = (validation: Validation) => result.errors.filter((e) => e.validation === validation).length
    if (result.matchmaker) {
      const { lobbyCountMax, maxPlayers, namespaceId } = result.matchmaker
      rows.push([
        `Matchmaker config (lobby_count_max ${lobbyCountMax}, max_players ${maxPlayers}, namespace ${namespaceId})`,
        verdict(count('matchmaker-config')),
      ])
    }
    if (result.groupDisplayName !== undefined)
      rows.push([`Group display name '${result.groupDisplayName}'`, verdict(count('group-display-name'))])
    const blocks: ReportBlock[] = [keyValueTable(rows)]
    const n = result.errors.length
    if (n) {
      const rows = result.errors.map((error) => [
        error.validation,
        { code: error.path.join('.') },
        error.message,
      ])
      blocks.push(heading('Errors'), table(['Validation', 'Path', 'Problem'], rows))
    }
    return { title: `gamehost validate: ${n ? plural(n, 'error') : 'valid'}`, blocks }
  },

  failure(result, inputs) {
    if (!result.errors.length || !inputs.failOnError) return undefined
    const what = [
      ...(result.errors.some((e) => e.validation === 'matchmaker-config') ? ['the matchmaker config'] : []),
      ...(result.errors.some((e) => e.validation === 'group-display-name')
        ? [`the group display name '${result.groupDisplayName}'`]
        : []),
    ].join(' and ')
    return new ValidationFailedError(what, problems(result.errors), { foundBy: 'The service' })
  },
}

function verdict(errors: number): string {
  return errors ? `invalid (${plural(errors, 'error')})` : 'valid'
}

/** Titled `lobby-count too high`, `group-display-name not unique`. */
function problems(errors: readonly ValidateError[]): ValidationProblem[] {
  return errors.map((error) => ({
    path: error.path,
    description: error.message,
    title:
      error.validation === 'group-display-name'
        ? `${inputName(Input.GroupDisplayName)} ${error.path.map((p) => (p === 'display-name-invalid' ? 'invalid' : p.replace(/-/g, ' '))).join(' ')}`
        : validationTitle(error.path),
  }))
}
