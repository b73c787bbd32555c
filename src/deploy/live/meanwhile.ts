// What another run published meanwhile. The service has no conditional write ("set the version only
// if it is still X"), so before a run checks or undoes its change of a namespace it reads, from the
// API (the edge lags behind), which version the namespace is on; another run's is left as it is.

import type { ServiceClient } from '../../api/client.ts'

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

/** A change not undone: another run published meanwhile. */
export class PublishedMeanwhileError extends Error {
  override name = 'PublishedMeanwhileError'
  readonly other: OtherVersion
  constructor(other: OtherVersion) {
    super(`another run published ${describeVersion(other)} meanwhile, which the namespace serves now`)
    this.other = other
  }
}
