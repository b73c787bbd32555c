import type { LobbySummary } from '../api/types.ts'
import {
  namedInputs,
  readBoolean,
  readRequiredConnection,
  readRequiredId,
  type Connection,
} from '../inputs/common.ts'
import { ActionName, Input, LobbyOutput } from '../inputs/constants.ts'
import type { Operation } from './operation.ts'
import { keyValueTable, heading, table, type Cell, type ReportBlock } from '../common/report.ts'

interface LobbyInputs extends Connection {
  namespaceId: string
  lobbyId: string
  failIfFailed: boolean
}

interface LobbyResult {
  lobby: LobbySummary
  status: 'running' | 'stopped'
  /** Null while it runs. */
  exitCode: number | null
  failed: boolean
}

export function lobbyState(lobby: LobbySummary): Omit<LobbyResult, 'lobby'> {
  const stopped = lobby.status.stopped
  if (!stopped) return { status: 'running', exitCode: null, failed: false }
  return { status: 'stopped', exitCode: stopped.exit_code, failed: stopped.failed }
}

export const lobbyOperation: Operation<LobbyInputs, LobbyResult> = {
  name: ActionName.LobbyLogs,

  read(get, options) {
    return {
      ...readRequiredConnection(get, options),
      namespaceId: readRequiredId(get, Input.NamespaceId, 'the namespace the lobby runs in'),
      lobbyId: readRequiredId(get, Input.LobbyId, 'the lobby to read'),
      failIfFailed: readBoolean(get, Input.FailIfFailed),
    }
  },

  async run(inputs, run, journal) {
    const answer = await run.client.getNamespaceLobby(inputs.gameId, inputs.namespaceId, inputs.lobbyId)
    journal.push(`read lobby ${inputs.lobbyId}`)
    // The real service puts metrics beside the lobby; the interface document puts them inside.
    const metrics = answer.metrics ?? answer.lobby.metrics
    const lobby = metrics === undefined ? answer.lobby : { ...answer.lobby, metrics }
    const result = { lobby, ...lobbyState(lobby) }
    run.logger.info(
      `Lobby ${lobby.lobby_id} (${lobby.lobby_group_name_id} in ${lobby.region_id}): ${statusText(result)}`,
    )
    if (result.failed && !inputs.failIfFailed) {
      const passes = namedInputs('{fail-if-failed} is false: the step passes.')
      run.logger.warning(`${failureMessage(result)}. ${passes}`, { title: 'Lobby failed' })
    }
    return result
  },

  outputs(result) {
    return {
      [LobbyOutput.Lobby]: result.lobby,
      [LobbyOutput.Status]: result.status,
      [LobbyOutput.ExitCode]: result.exitCode,
      [LobbyOutput.Failed]: result.failed,
    }
  },

  report(result) {
    const { lobby } = result
    const rows: Array<[string, Cell]> = [
      ['Lobby', { code: lobby.lobby_id }],
      ['Namespace', { code: lobby.namespace_id }],
      ['Lobby group', lobby.lobby_group_name_id],
      ['Region', lobby.region_id],
      ['Status', statusText(result)],
      ['Created', lobby.create_ts],
    ]
    if (lobby.start_ts) rows.push(['Started', lobby.start_ts])
    if (lobby.ready_ts) rows.push(['Ready', lobby.ready_ts])
    if (lobby.status.stopped) rows.push(['Stopped', lobby.status.stopped.stop_ts])
    const blocks: ReportBlock[] = [keyValueTable(rows)]
    const { metrics } = lobby
    if (metrics) {
      const allocated = metrics.allocated_memory
      const memory = `Memory (MB${allocated !== undefined ? ` of ${number(allocated)} allocated` : ''})`
      blocks.push(
        heading(`Metrics of job ${metrics.job}`),
        table(
          ['Metric', 'Samples', 'Last', 'Peak'],
          [metricRow('CPU', metrics.cpu), metricRow(memory, metrics.memory)],
        ),
      )
    }
    const title = result.failed ? 'failed' : result.status
    return { title: `gamehost lobby ${lobby.lobby_group_name_id}: ${title}`, blocks }
  },

  failure(result, inputs) {
    return result.failed && inputs.failIfFailed ? new Error(failureMessage(result)) : undefined
  },
}

function statusText(result: LobbyResult): string {
  if (result.status === 'running') return 'running'
  return `stopped, ${result.failed ? 'failed' : 'not failed'}, exit code ${result.exitCode}`
}

function failureMessage(result: LobbyResult): string {
  const { lobby } = result
  return (
    `Lobby ${lobby.lobby_id} (${lobby.lobby_group_name_id} in ${lobby.region_id}) failed: ` +
    `it stopped with exit code ${result.exitCode} at ${lobby.status.stopped?.stop_ts ?? 'an unknown time'}`
  )
}

function metricRow(metric: string, values: readonly number[]): string[] {
  const peak = values.length ? Math.max(...values) : undefined
  return [metric, String(values.length), number(values.at(-1)), number(peak)]
}

function number(value: number | undefined): string {
  return value === undefined ? '' : String(Math.round(value * 100) / 100)
}
