// The names of the inputs (`Input.ApiUrl` is 'api-url') and their bounds are the table's (table.ts).
export * from './table.ts'
import type { ActionName as ActionId } from './table.ts'

/** Output names of each action, as in its action.yml and README. */
export const Output = {
  SiteId: 'site-id',
  UploadId: 'upload-id',
  NamespaceId: 'namespace-id',
  FileCount: 'file-count',
  TotalBytes: 'total-bytes',
  Digest: 'digest',
  Manifest: 'manifest',
  VersionId: 'version-id',
  Url: 'url',
  DomainStatus: 'domain-status',
  Skipped: 'skipped',
  ReusedFrom: 'reused-from',
  Verified: 'verified',
  SmokeTest: 'smoke-test',
  Screenshot: 'screenshot',
} as const
export const PublishOutput = {
  NamespaceId: 'namespace-id',
  VersionId: 'version-id',
  Url: 'url',
  ReplacedVersionId: 'replaced-version-id',
  Digest: 'digest',
  Commit: 'commit',
} as const
export const ServersOutput = { Servers: 'servers', Count: 'count' } as const
export const LobbyOutput = {
  Lobby: 'lobby',
  Status: 'status',
  ExitCode: 'exit-code',
  Failed: 'failed',
} as const
export const AvatarsOutput = {
  CustomAvatars: 'custom-avatars',
  Count: 'count',
  CompleteCount: 'complete-count',
} as const
export const ValidateOutput = { Errors: 'errors', Valid: 'valid' } as const
export const SweepOutput = { Retired: 'retired' } as const

export const OUTPUTS: Record<ActionId, Record<string, string>> = {
  deploy: Output,
  publish: PublishOutput,
  servers: ServersOutput,
  'lobby-logs': LobbyOutput,
  avatars: AvatarsOutput,
  validate: ValidateOutput,
  sweep: SweepOutput,
}

/** The folder of each action's action.yml and its CLI subcommand. */
export const ActionName = {
  Deploy: 'deploy',
  Servers: 'servers',
  LobbyLogs: 'lobby-logs',
  Avatars: 'avatars',
  Validate: 'validate',
  Publish: 'publish',
  Sweep: 'sweep',
} as const
