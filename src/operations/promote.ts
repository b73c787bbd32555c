// Promotion from another namespace: the build it serves, proven before anything is written, moved onto
// the target's own config (`promote: build`), or its whole version (`promote: version`).

import type { ServiceClient } from '../api/client.ts'
import { ServiceStateError } from '../api/errors.ts'
import type { GameVersion, NamespaceSummary, VersionConfig, VersionSummary } from '../api/types.ts'
import type { Run } from '../api/run.ts'
import { inputName, inputAssignment } from '../common/input-naming.ts'
import type { Logger } from '../common/logger.ts'
import { Input } from '../inputs/constants.ts'
import { hostOptionsOf, readServedRecord, RECORD_PATH, type ServedRecord } from '../deploy/collect/record.ts'
import {
  createVersion,
  deployConfig,
  readVersion,
  validateDeployVersion,
  versionName,
} from '../deploy/live/version-config.ts'
import type { Expected } from '../deploy/live/verify.ts'

export const PROMOTE_CHOICES = ['build', 'version'] as const
export type PromoteWhat = (typeof PROMOTE_CHOICES)[number]

export interface PromoteInputs {
  gameId: string
  what: PromoteWhat
  expectDigest: string | undefined
  expectCommit: string | undefined
  /** From from-basic-auth. */
  authorization: string | undefined
}

export interface PromotedBuild {
  from: NamespaceSummary
  version: GameVersion
  siteId: string
  /** Undefined when no CDN domain is known: nothing tells which build it is. */
  served: ServedRecord | undefined
}

/** "build sha256:… (commit abc1234)" */
export function describeBuild(build: PromotedBuild): string {
  if (!build.served) return `site ${build.siteId}`
  const { digest, commit } = build.served.record
  return `build ${digest}${commit ? ` (commit ${commit.slice(0, 7)})` : ''}`
}

/** Refuses, before anything is written, a source that serves no build we can prove, or not the one expected. */
export async function readPromotedBuild(
  run: Pick<Run, 'client' | 'dispatcher' | 'signal' | 'timeouts'>,
  inputs: PromoteInputs,
  from: NamespaceSummary,
  sourceUrl: string | undefined,
): Promise<PromotedBuild> {
  const version = await readVersion(run.client, inputs.gameId, from.version_id)
  const siteId = version.config.cdn?.site_id
  const what = `${inputName(Input.FromNamespace)} '${from.name_id}' serves version '${version.display_name}' (${version.version_id})`
  if (!siteId)
    throw new ServiceStateError(
      `${what}, which has no CDN site: it serves no build, and nothing was published. Deploy a build to ` +
        `${from.name_id} first (gamehost deploy --namespace ${from.name_id}), or give a ${inputName(Input.VersionId)}`,
    )
  if (!sourceUrl) {
    if (inputs.expectDigest || inputs.expectCommit)
      throw new ServiceStateError(
        `${what}, but which build it is cannot be read: the service names no CDN domain (set ${inputName(Input.CdnDomain)})`,
      )
    return { from, version, siteId, served: undefined }
  }
  const served = await readServedRecord(sourceUrl, hostOptionsOf(run, inputs.authorization))
  if ('absent' in served) throw new ServiceStateError(`${what}, but ${noRecord(sourceUrl, served.absent)}`)
  checkExpected(inputs, served, from)
  return { from, version, siteId, served }
}

function noRecord(url: string, absent: string): string {
  const why = `${url}${RECORD_PATH} ${absent.replace(/^it /, '')}`
  if (absent === 'it answered 401')
    return `its host asks for credentials (${why}): give them in ${inputName(Input.FromBasicAuth)} to read which build it serves; nothing was published`
  return (
    `its host serves no record of a gamehost build (${why}), so what it serves cannot be proven: ` +
    `deploy it with gamehost (${inputAssignment(Input.SiteRecord, 'true')}), or give a ${inputName(Input.VersionId)}; nothing was published`
  )
}

function checkExpected(inputs: PromoteInputs, served: ServedRecord, from: NamespaceSummary): void {
  const { digest, commit } = served.record
  const refuse = (what: string) =>
    new ServiceStateError(`${from.name_id} serves ${what}: nothing was published`)
  if (inputs.expectDigest && inputs.expectDigest !== digest)
    throw refuse(`build ${digest}, not ${inputName(Input.ExpectDigest)} ${inputs.expectDigest}`)
  const expected = inputs.expectCommit?.toLowerCase()
  if (expected && !commit?.toLowerCase().startsWith(expected))
    throw refuse(
      `a build of ${commit ? `commit ${commit}` : 'no known commit'}, not ${inputName(Input.ExpectCommit)} ${inputs.expectCommit}`,
    )
}

/** The host must serve the source's record, byte for byte, and every file it lists. */
export function expectedOfBuild(build: PromotedBuild): Expected | { unknown: string } {
  if (!build.served) return { unknown: 'no CDN domain is known, so no record of the build could be read' }
  const { record, bytes } = build.served
  return { files: record.files, record: { path: RECORD_PATH, size: bytes.size, sha256: bytes.sha256 } }
}

/** The target's own config with the build's site and routes: created once validated, or the current one. */
export async function buildOnTarget(
  client: ServiceClient,
  gameId: string,
  target: NamespaceSummary,
  build: PromotedBuild,
  versions: readonly VersionSummary[],
  logger: Logger,
): Promise<{ versionId: string; displayName: string; created: boolean }> {
  const current = await readVersion(client, gameId, target.version_id)
  const routes = build.version.config.cdn?.routes ?? undefined
  const config = deployConfig(current.config, build.siteId, routes)
  if (sameJson(current.config.cdn, config.cdn))
    return { versionId: current.version_id, displayName: current.display_name, created: false }
  const wanted = promotedName(target.name_id, build.version.display_name)
  const name = await versionName(client, gameId, wanted, versions)
  await validateDeployVersion(client, gameId, name, current.config, routes)
  const made = await createVersion(client, gameId, name, config, logger)
  logger.info(
    `Created version '${made.displayName}' (${made.versionId}): ${target.name_id}'s config ` +
      `('${current.display_name}'), with the site and routes of ${build.from.name_id}'s '${build.version.display_name}'`,
  )
  return { ...made, created: true }
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null)
}

/** Display names are at most 128 bytes: past that, the service reserves one. */
function promotedName(targetNameId: string, sourceName: string): string {
  const name = `${targetNameId} from ${sourceName}`
  return Buffer.byteLength(name) <= 128 ? name : targetNameId
}

/** `promote: version`: the parts of the target's config beyond `cdn` that the source's version replaces. */
export function revertedConfig(target: VersionConfig, source: VersionConfig): string[] {
  const value = (config: VersionConfig, key: string) => config[key as keyof VersionConfig]
  const keys = new Set([...Object.keys(target), ...Object.keys(source)])
  keys.delete('cdn')
  return [...keys].sort().filter((key) => !sameJson(value(target, key), value(source, key)))
}
