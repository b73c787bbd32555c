// What another run published meanwhile. The service has no conditional write ("set the version only
// if it is still X"), so before a run checks or undoes its change of a namespace it reads, from the
// API (the edge lags behind), which version the namespace is on; another run's is left as it is.

import type { ServiceClient } from '../../api/client.ts'
import type { SiteRecord } from '../collect/record.ts'
import { checkOlder, type OlderCheck } from '../target/older.ts'
import { closedVersionName } from './version-config.ts'

export interface OtherVersion {
  versionId: string
  /** Undefined when the version could not be read. */
  versionName?: string
}

/** The version the namespace is on when it is not `ours`; undefined while it is `ours`. */
export async function publishedMeanwhile(
  client: ServiceClient,
  gameId: string,
  namespaceId: string,
  ours: string,
): Promise<OtherVersion | undefined> {
  const { namespace } = await client.getNamespace(gameId, namespaceId)
  if (namespace.version_id === ours) return undefined
  const versionId = namespace.version_id
  const versionName = await client.getVersion(gameId, versionId).then(
    ({ version }) => version.display_name,
    () => undefined,
  )
  return versionName === undefined ? { versionId } : { versionId, versionName }
}

export function describeVersion({ versionId, versionName }: OtherVersion): string {
  return versionName === undefined ? `version ${versionId}` : `version '${versionName}' (${versionId})`
}

export class PublishedMeanwhileError extends Error {
  override name = 'PublishedMeanwhileError'
  readonly other: OtherVersion
  constructor(other: OtherVersion) {
    super(`another run published ${describeVersion(other)} meanwhile, which the namespace serves now`)
    this.other = other
  }
}

interface RecheckOptions {
  client: ServiceClient
  gameId: string
  namespaceId: string
  nameId: string
  /** The version the run planned from: what the namespace was on when the run read it. */
  plannedFrom: string
  servedThen: { record: SiteRecord } | { absent: string } | undefined
  readServed: () => Promise<{ record: SiteRecord } | { absent: string }>
  older: Omit<Parameters<typeof checkOlder>[0], 'live' | 'nameId'>
}

/**
 * Immediately before a publish: undefined while the namespace is on the version the run planned from;
 * else the guard against an older build, decided again against the version another run published.
 */
export async function recheckOlder(options: RecheckOptions): Promise<OlderCheck | undefined> {
  const { client, gameId, namespaceId, nameId, older } = options
  const other = await publishedMeanwhile(client, gameId, namespaceId, options.plannedFrom)
  if (!other) return undefined
  if (other.versionName?.startsWith(closedVersionName(nameId, undefined))) {
    const reason = `Namespace ${nameId} was closed meanwhile (${describeVersion(other)}): nothing was published, it keeps its closed page`
    older.logger.warning(reason, { title: 'Closed meanwhile' })
    return { blocked: true, closed: true, reason }
  }
  older.logger.info(`Another run published ${describeVersion(other)} to namespace ${nameId} meanwhile`)
  const commit = (await servedCommit(options)) ?? nameCommit(other.versionName)
  const live = commit
    ? { record: { commit } }
    : { absent: `neither its host nor the name of ${describeVersion(other)} tells its commit` }
  return checkOlder({ ...older, live, nameId })
}

async function servedCommit({ servedThen, readServed }: RecheckOptions): Promise<string | undefined> {
  const now = await readServed()
  if (!('record' in now)) return undefined
  const then = servedThen && 'record' in servedThen ? servedThen.record.digest : undefined
  return now.record.digest !== then ? now.record.commit : undefined
}

function nameCommit(versionName: string | undefined): string | undefined {
  const last = versionName?.split(' ').pop()
  return last && /^[0-9a-f]{7,40}$/i.test(last) ? last : undefined
}
