/**
 * Input names of every action, as in the action.yml files (the deploy's action.yml at the root,
 * servers/, lobby-logs/, avatars/ and validate/). The CLI's flags are these names with `--`.
 */
export const Input = {
  ApiUrl: 'api-url',
  Token: 'token',
  GameId: 'game-id',
  Path: 'path',
  Files: 'files',
  IncludeHidden: 'include-hidden',
  SiteName: 'site-name',
  Namespace: 'namespace',
  NamespaceDisplayName: 'namespace-display-name',
  VersionId: 'version-id',
  NamespaceId: 'namespace-id',
  Domain: 'domain',
  LobbyCountMax: 'lobby-count-max',
  MaxPlayers: 'max-players',
  Concurrency: 'concurrency',
  Retries: 'retries',
  RequestTimeout: 'request-timeout',
  MaxRetryAfter: 'max-retry-after',
  DryRun: 'dry-run',
  Comment: 'comment',
  GitHubToken: 'github-token',
  SkipUnchanged: 'skip-unchanged',
  IfNoToken: 'if-no-token',
  PullRequest: 'pull-request',
  Publish: 'publish',
  CdnDomain: 'cdn-domain',
  WebEngine: 'web-engine',
  Headers: 'headers',
  // publish (with namespace, namespace-id, version-id and cdn-domain)
  FromNamespace: 'from-namespace',
  // servers
  EnvironmentId: 'environment-id',
  Tags: 'tags',
  IncludeDestroyed: 'include-destroyed',
  Limit: 'limit',
  // lobby-logs (with namespace-id)
  LobbyId: 'lobby-id',
  FailIfFailed: 'fail-if-failed',
  // validate (with namespace-id, lobby-count-max and max-players)
  GroupDisplayName: 'group-display-name',
  FailOnError: 'fail-on-error',
} as const

/** Output names of the deploy action, as in action.yml. */
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
  Skipped: 'skipped',
} as const

/** Output names of the publish action. */
export const PublishOutput = {
  NamespaceId: 'namespace-id',
  VersionId: 'version-id',
  Url: 'url',
  ReplacedVersionId: 'replaced-version-id',
} as const

/** Output names of the servers action. */
export const ServersOutput = {
  Servers: 'servers',
  Count: 'count',
} as const

/** Output names of the lobby-logs action. */
export const LobbyOutput = {
  Lobby: 'lobby',
  Status: 'status',
  ExitCode: 'exit-code',
  Failed: 'failed',
} as const

/** Output names of the avatars action. */
export const AvatarsOutput = {
  CustomAvatars: 'custom-avatars',
  Count: 'count',
  CompleteCount: 'complete-count',
} as const

/** Output names of the validate action. */
export const ValidateOutput = {
  Errors: 'errors',
  Valid: 'valid',
} as const

/** The actions of this repository: the folder of each one's action.yml and its CLI subcommand. */
export const ActionName = {
  Deploy: 'deploy',
  Servers: 'servers',
  LobbyLogs: 'lobby-logs',
  Avatars: 'avatars',
  Validate: 'validate',
  Publish: 'publish',
} as const

/** The hosted service's CDN domain: namespaces are served at `{game}--{namespace}.rivet.game`. */
export const DEFAULT_CDN_DOMAIN = 'rivet.game'

/** Where the CLI reads the token when --token is not given. */
export const TOKEN_ENV = 'GAMEHOST_TOKEN'

/** Chosen with `npm run bench -- --sweep` at 20 and 80 ms per PUT: see BENCHMARKS.md. */
export const DEFAULT_CONCURRENCY = 192
/**
 * PUTs in flight when an upload starts (or the concurrency, if lower): the default concurrency. Chosen
 * with builds starting at 16, 32, 64, 128 and 192 (`npm run bench -- --latency 20,80 --baseline ...`):
 * at 80 ms per PUT, 1,200 small files took 1.10x the bare uploader at 128 from 16, 1.00x from 128 and
 * 0.94x from 192; at 20 ms and on the mixed site the start made no difference beyond noise, nor to
 * the peak memory of 20,000 files.
 */
export const START_CONCURRENCY = 192
export const MAX_CONCURRENCY = 256
export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 30
export const MAX_RETRIES = 20
/** The longest `max-retry-after` a user may set: an hour. */
export const MAX_RETRY_AFTER_SECONDS = 3600
