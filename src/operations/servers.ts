import type { ServiceClient } from '../api/client.ts'
import { serverTagsProblem } from '../api/rules.ts'
import type { Server } from '../api/types.ts'
import {
  readBoolean,
  readOptionalInteger,
  readRequiredId,
  readRequiredConnection,
  usage,
  type Connection,
} from '../inputs/common.ts'
import { ActionName, Input, ServersOutput } from '../inputs/constants.ts'
import type { Logger } from '../common/logger.ts'
import type { Journal, Operation } from './operation.ts'
import { formatEpochMs, keyValueTable, table, text, type Cell, type ReportBlock } from '../common/report.ts'
import { inputName } from '../common/input-naming.ts'
import { plural } from '../common/format.ts'

const LIMIT_MAX = 1_000_000
/** Rows of the servers table in a report; the output always holds every server. */
const REPORT_ROWS_MAX = 200

interface ServersInputs extends Connection {
  environmentId: string
  tags: Record<string, string> | undefined
  includeDestroyed: boolean
  limit: number | undefined
}

type ServersResult = Listing & Pick<ServersInputs, 'environmentId' | 'tags' | 'includeDestroyed'>

interface Listing {
  servers: Server[]
  pages: number
  /** More servers may match. */
  limited: boolean
}

/**
 * The next page starts after the id of the last server received. The service sends no continuation
 * field and does not say its page size, so the listing ends at an empty page, at a page shorter than an
 * earlier one (the service's "short page"), at a page holding nothing new, or at the limit.
 */
export async function listAllServers(
  client: ServiceClient,
  options: Omit<ServersInputs, 'apiUrl' | 'token'>,
  logger: Pick<Logger, 'info' | 'warning'>,
  journal?: Journal,
): Promise<Listing> {
  const servers: Server[] = []
  const seen = new Set<string>()
  let cursor: string | undefined
  let longest = 0
  const { gameId, environmentId, tags, includeDestroyed, limit } = options
  for (let pages = 1; ; pages++) {
    const page = (await client.listServers(gameId, environmentId, { tags, includeDestroyed, cursor })).servers
    const fresh = page.filter((server) => !seen.has(server.id))
    for (const server of fresh) {
      seen.add(server.id)
      servers.push(server)
    }
    logger.info(`Page ${pages}: ${plural(page.length, 'server')} (${servers.length} in all)`)
    journal?.push(`page ${pages} listed (${servers.length} servers in all)`)
    if (fresh.length < page.length) {
      logger.warning(
        `The service sent ${page.length - fresh.length} servers again on page ${pages}: the listing ends here`,
      )
    }
    const last = page.at(-1)
    const ended = !last || fresh.length < page.length || page.length < longest
    if (limit !== undefined && servers.length >= limit)
      return { servers: servers.slice(0, limit), pages, limited: servers.length > limit || !ended }
    if (ended) return { servers, pages, limited: false }
    longest = page.length
    cursor = last.id
  }
}

export const serversOperation: Operation<ServersInputs, ServersResult> = {
  name: ActionName.Servers,

  read(get, options) {
    return {
      ...readRequiredConnection(get, options),
      environmentId: readRequiredId(get, Input.EnvironmentId, 'the environment whose servers to list'),
      tags: readTags(get(Input.Tags)),
      includeDestroyed: readBoolean(get, Input.IncludeDestroyed),
      limit: readOptionalInteger(Input.Limit, get(Input.Limit), 1, LIMIT_MAX),
    }
  },

  async run(inputs, run, journal) {
    const filter = inputs.tags ? ` with tags ${formatTags(inputs.tags)}` : ''
    const destroyed = inputs.includeDestroyed ? ' (destroyed ones included)' : ''
    const listed = await run.logger.group(
      `List the servers of ${inputs.environmentId}${filter}${destroyed}`,
      () => listAllServers(run.client, inputs, run.logger, journal),
    )
    run.logger.info(
      `${plural(listed.servers.length, 'server')}${listed.limited ? ` (the first ${inputs.limit}: ${inputName(Input.Limit)} reached)` : ''}`,
    )
    return {
      environmentId: inputs.environmentId,
      tags: inputs.tags,
      includeDestroyed: inputs.includeDestroyed,
      ...listed,
    }
  },

  outputs(result) {
    return { [ServersOutput.Servers]: result.servers, [ServersOutput.Count]: result.servers.length }
  },

  report(result) {
    const blocks: ReportBlock[] = [
      keyValueTable([
        ['Environment', { code: result.environmentId }],
        ['Tags', result.tags ? formatTags(result.tags) : '(any)'],
        ['Destroyed servers', result.includeDestroyed ? 'included' : 'left out'],
        ['Servers', `${result.servers.length}${result.limited ? ' (limit reached)' : ''}`],
        ['Requests', String(result.pages)],
      ]),
    ]
    const count = result.servers.length
    if (count) {
      const rows = result.servers.slice(0, REPORT_ROWS_MAX).map(serverRow)
      blocks.push(table(['Server', 'Datacenter', 'Tags', 'Created', 'Destroyed', 'Ports'], rows))
    }
    if (count > REPORT_ROWS_MAX)
      blocks.push(
        text(
          `The first ${REPORT_ROWS_MAX} of ${count}; the ${ServersOutput.Servers} output holds every one.`,
        ),
      )
    return { title: `gamehost servers: ${result.environmentId}`, blocks }
  },
}

function serverRow(server: Server): Cell[] {
  const ports = Object.entries(server.network.ports)
    .map(([name, port]) => {
      const where =
        port.public_hostname !== undefined || port.public_port !== undefined
          ? ` ${port.public_hostname ?? ''}${port.public_port !== undefined ? `:${port.public_port}` : ''}`
          : ''
      return `${name} ${port.protocol}${where}`
    })
    .join(', ')
  return [
    { code: server.id },
    server.datacenter,
    formatTags(server.tags),
    formatEpochMs(server.created_at),
    server.destroyed_at === undefined ? '—' : formatEpochMs(server.destroyed_at),
    ports || '—',
  ]
}

function formatTags(tags: Record<string, string>): string {
  const pairs = Object.entries(tags).map(([key, value]) => `${key}=${value}`)
  return pairs.join(', ') || '—'
}

/** Empty or {} is no filter. */
export function readTags(raw: string): Record<string, string> | undefined {
  const json = raw.trim()
  if (!json) return undefined
  let tags: unknown
  try {
    tags = JSON.parse(json)
  } catch {
    throw usage`{tags} '${json}' is not JSON: give a JSON object of string to string, like {"region": "eu"}`
  }
  const problem = serverTagsProblem(tags)
  if (problem) throw usage`{tags} '${json}': ${problem}, like {"region": "eu"}`
  const filter = tags as Record<string, string>
  return Object.keys(filter).length ? filter : undefined
}
