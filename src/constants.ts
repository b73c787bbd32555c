/** Input names of the deploy action, as in action.yml. */
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
  DryRun: 'dry-run',
  Comment: 'comment',
  GitHubToken: 'github-token',
  SkipUnchanged: 'skip-unchanged',
  IfNoToken: 'if-no-token',
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
  Skipped: 'skipped',
} as const

export const DEFAULT_CONCURRENCY = 8
export const MAX_CONCURRENCY = 256
export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 30
export const MAX_RETRIES = 20
