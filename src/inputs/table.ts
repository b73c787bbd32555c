// Every input of every action, one row each: the readers, the CLI's flags and --help, and
// __tests__/inputs/table.test.ts (against every action.yml and README) are driven from here. Adding an
// input: a row here, a line in action.yml and in docs/inputs.md (and the README's table if most need it).

import { DEFAULT_MAX_RETRY_AFTER_SECONDS, DEFAULT_RETRIES } from '../common/retry.ts'
import {
  DEFAULT_REQUEST_TIMEOUT_SECONDS,
  DEFAULT_SMOKE_TEST_SECONDS,
  DEFAULT_VERIFY_TIMEOUT_SECONDS,
  MAX_RETRY_AFTER_SECONDS,
  MAX_SMOKE_TEST_SECONDS,
  MAX_VERIFY_TIMEOUT_SECONDS,
} from '../common/timeouts.ts'

export { DEFAULT_REQUEST_TIMEOUT_SECONDS }

/** The folder of each one's action.yml (the deploy's at the root). */
export const ACTIONS = ['deploy', 'publish', 'servers', 'lobby-logs', 'avatars', 'validate', 'sweep'] as const
export type ActionName = (typeof ACTIONS)[number]
export type CommandName = ActionName | 'close'

export const TOKEN_ENV = 'GAMEHOST_TOKEN'
export const GITHUB_TOKEN_ENV = 'GITHUB_TOKEN'
/** A password on a command line is seen by ps. */
export const BASIC_AUTH_ENV = 'GAMEHOST_BASIC_AUTH'
export const API_URL_ENV = 'GAMEHOST_API_URL'
export const GAME_ID_ENV = 'GAMEHOST_GAME_ID'
/** Chosen with `npm run bench -- --sweep` at 20 and 80 ms per PUT: see BENCHMARKS.md. */
export const DEFAULT_CONCURRENCY = 192
export const MAX_CONCURRENCY = 256
export const MAX_RETRIES = 20

export interface FlagSpec {
  /** `list`: repeated, its values joined by lines as the action's multi-line input. */
  type: 'string' | 'boolean' | 'list'
  value?: string
  /** The subcommands that take it; default the actions that take the input. */
  commands?: readonly CommandName[]
  /** Its --help line in a subcommand where it differs from the row's description. */
  help?: Partial<Record<CommandName, string>>
  /** Shown as --[no-]<name>: a boolean that is on by default. */
  negatable?: boolean
  env?: string
}

export interface InputRow {
  name: string
  actions: readonly ActionName[]
  /** action.yml's `required: true`, the README's "required". */
  requiredIn?: readonly ActionName[]
  /** action.yml's default ('' for none), which the reader falls back to as well. */
  default: string
  /** What the README's default column says when the default is made at run time. */
  shownDefault?: string
  /** Masked in the action's log before anything runs. */
  secret?: boolean
  /** One line (and the CLI's --help line). */
  description: string
  /** None for what only an action has (a pull request's comment). */
  flag?: FlagSpec
}

const ALL = ACTIONS
/** The README's advanced table, --help's advanced flags. */
export const ADVANCED_DEPLOY_INPUTS: ReadonlySet<string> = new Set([
  ...['include-hidden', 'site-name', 'namespace-display-name', 'version-id', 'namespace-id', 'cdn-domain'],
  ...['web-engine', 'headers', 'fail-on-warning', 'lobby-count-max', 'max-players', 'concurrency', 'retries'],
  ...['max-retry-after', 'request-timeout', 'verify-timeout', 'on-verify-failure', 'site-record'],
  ...['allow-older', 'compare-with', 'skip-unchanged', 'reuse-reviewed', 'if-no-token', 'pull-request'],
  ...['browser', 'smoke-test-seconds', 'namespace-prefix', 'preview-ttl', 'max-previews'],
])
const WITH_CLOSE: readonly CommandName[] = [...ACTIONS, 'close']
const row = (
  name: string,
  actions: readonly ActionName[],
  spec: Omit<InputRow, 'name' | 'actions' | 'default'> & { default?: string },
): InputRow => ({ name, actions, default: '', ...spec })

export const INPUTS = {
  ApiUrl: row('api-url', ALL, {
    requiredIn: ALL,
    description: `Base URL of the service (required); default the ${API_URL_ENV} environment variable`,
    flag: { type: 'string', value: 'url', env: API_URL_ENV, commands: WITH_CLOSE },
  }),
  Token: row('token', ALL, {
    requiredIn: ['publish', 'servers', 'lobby-logs', 'avatars', 'validate', 'sweep'],
    secret: true,
    description: `The service token; default the ${TOKEN_ENV} environment variable`,
    flag: { type: 'string', value: 'token', env: TOKEN_ENV, commands: WITH_CLOSE },
  }),
  GameId: row('game-id', ALL, {
    requiredIn: ALL,
    description: `The id of the game (required); default the ${GAME_ID_ENV} environment variable`,
    flag: { type: 'string', value: 'id', env: GAME_ID_ENV, commands: WITH_CLOSE },
  }),
  Path: row('path', ['deploy'], {
    description: 'Folder of the built site; without it, only provision',
    flag: { type: 'string', value: 'dir' },
  }),
  Files: row('files', ['deploy'], {
    default: '**',
    description: 'Glob pattern relative to --path, ! to exclude; repeat for more (default **)',
    flag: { type: 'list', value: 'glob' },
  }),
  IncludeHidden: row('include-hidden', ['deploy'], {
    default: 'false',
    description: 'Upload hidden files and folders (.env, .git/) too',
    flag: { type: 'boolean' },
  }),
  SiteName: row('site-name', ['deploy'], {
    shownDefault: 'derived',
    description: 'Display name of the site (default: repository, branch and short sha)',
    flag: { type: 'string', value: 'name' },
  }),
  Namespace: row('namespace', ['deploy', 'publish'], {
    description: 'name_id of the namespace to use, created when absent',
    flag: {
      type: 'string',
      value: 'name-id',
      commands: ['deploy', 'publish', 'close'],
      help: {
        publish: 'name_id of the namespace to publish to (or --namespace-id)',
        close: "name_id of the preview's namespace (or --namespace-id)",
      },
    },
  }),
  NamespaceDisplayName: row('namespace-display-name', ['deploy'], {
    shownDefault: 'the `namespace`',
    description: 'Display name of the created namespace',
    flag: { type: 'string', value: 'name' },
  }),
  VersionId: row('version-id', ['deploy', 'publish'], {
    description:
      "Version whose config the published version copies (default: the namespace's current; for a new namespace, what prod serves)",
    flag: {
      type: 'string',
      value: 'id',
      help: { publish: "The version to publish, or 'previous' (or --from-namespace)" },
    },
  }),
  NamespaceId: row('namespace-id', ['deploy', 'publish', 'lobby-logs', 'validate'], {
    requiredIn: ['lobby-logs'],
    description: 'An existing namespace to work on, checked to be in the game',
    flag: {
      type: 'string',
      value: 'id',
      commands: ['deploy', 'publish', 'lobby-logs', 'validate', 'close'],
      help: {
        publish: 'The namespace to publish to (or --namespace)',
        'lobby-logs': 'The namespace the lobby runs in (required)',
        validate: 'The namespace to validate the matchmaker config against',
        close: "The preview's namespace (or --namespace)",
      },
    },
  }),
  Domain: row('domain', ['deploy'], {
    description: 'Domain to add to the namespace (host name only)',
    flag: {
      type: 'string',
      value: 'host',
      commands: ['deploy', 'close'],
      help: { close: 'The domain to free, when the preview had one' },
    },
  }),
  BasicAuth: row('basic-auth', ['deploy'], {
    secret: true,
    description:
      "user:password (from a secret): the namespace's hosts ask for it before the build is published there; empty makes the namespace public again",
    flag: { type: 'string', value: 'user:password', env: BASIC_AUTH_ENV },
  }),
  Publish: row('publish', ['deploy'], {
    default: 'true',
    description:
      'Publish the site to the namespace, so that it is live (default; --no-publish to upload only)',
    flag: { type: 'boolean' },
  }),
  Verify: row('verify', ['deploy', 'publish'], {
    default: 'true',
    description:
      'After publishing, fetch the URL until it serves this build (its pages, engine files and largest files, their bytes and headers) before saying it is live (default; --no-verify to skip)',
    flag: {
      type: 'boolean',
      negatable: true,
      help: {
        publish:
          'After publishing, fetch the URL until it serves the version (the record of its build) before saying it is live (default; --no-verify to skip)',
      },
    },
  }),
  VerifyTimeout: row('verify-timeout', ['deploy', 'publish'], {
    default: String(DEFAULT_VERIFY_TIMEOUT_SECONDS),
    description: `Seconds the URL may take to serve the build once published, 1 to ${MAX_VERIFY_TIMEOUT_SECONDS} (default ${DEFAULT_VERIFY_TIMEOUT_SECONDS}: the CDN takes seconds to minutes)`,
    flag: { type: 'string', value: 's' },
  }),
  OnVerifyFailure: row('on-verify-failure', ['deploy', 'publish'], {
    default: 'rollback',
    description:
      'When the URL does not serve the build in time: rollback (put the namespace back on the version it served before, and fail), fail, or warn (default rollback)',
    flag: { type: 'string', value: 'action' },
  }),
  SmokeTest: row('smoke-test', ['deploy'], {
    default: 'false',
    description:
      'Once seen live, open the URL in a headless Chrome or Chromium and watch the game start: errors, failed requests, a canvas that draws; a failure is handled as on-verify-failure says',
    flag: { type: 'boolean' },
  }),
  Browser: row('browser', ['deploy'], {
    description: `Path of the Chrome or Chromium for smoke-test (default: CHROME_PATH, CHROME_BIN, then the OS's usual install paths)`,
    flag: { type: 'string', value: 'path' },
  }),
  SmokeTestSeconds: row('smoke-test-seconds', ['deploy'], {
    default: String(DEFAULT_SMOKE_TEST_SECONDS),
    description: `Seconds the smoke test watches the page after it loaded, 1 to ${MAX_SMOKE_TEST_SECONDS} (default ${DEFAULT_SMOKE_TEST_SECONDS})`,
    flag: { type: 'string', value: 's' },
  }),
  CdnDomain: row('cdn-domain', ['deploy', 'publish', 'sweep'], {
    description:
      "Domain namespaces are served under, for the URL (default: the service's own, from GET /cloud/bootstrap; an origin like http://localhost:8787 for the emulator)",
    flag: {
      type: 'string',
      value: 'domain',
      commands: ['deploy', 'publish', 'close', 'sweep'],
      help: {
        publish: "Domain namespaces are served under, for the URL (default: the service's own)",
        close: "Domain namespaces are served under, for the URL (default: the service's own)",
        sweep:
          "Domain namespaces are served under, to read each preview's record (default: the service's own)",
      },
    },
  }),
  WebEngine: row('web-engine', ['deploy'], {
    default: 'auto',
    description:
      'Serve the build as its engine needs: auto (recognise a Unity WebGL build or a Godot web export), unity, godot or none (default auto)',
    flag: { type: 'string', value: 'engine' },
  }),
  Headers: row('headers', ['deploy'], {
    description: `Headers of the published version, as YAML: a map of glob to one header, like '"assets/**": {Cache-Control: "public, max-age=31536000, immutable"}' (not on pages: the CDN sets their Cache-Control)`,
    flag: { type: 'string', value: 'yaml' },
  }),
  FailOnWarning: row('fail-on-warning', ['deploy'], {
    default: 'false',
    description:
      'Fail before anything is created when the site draws a warning (a Godot threads export that cannot start)',
    flag: { type: 'boolean' },
  }),
  RequireIndex: row('require-index', ['deploy'], {
    default: 'true',
    description:
      'Refuse a build with no index.html at its root, before anything is created: its / would answer 404 (default; --no-require-index for a site that is no page, like an asset host)',
    flag: { type: 'boolean', negatable: true },
  }),
  LobbyCountMax: row('lobby-count-max', ['deploy', 'validate'], {
    description: 'Matchmaker config: lobby_count_max (with --max-players)',
    flag: { type: 'string', value: 'n' },
  }),
  MaxPlayers: row('max-players', ['deploy', 'validate'], {
    description: 'Matchmaker config: max_players (with --lobby-count-max)',
    flag: { type: 'string', value: 'n' },
  }),
  Concurrency: row('concurrency', ['deploy'], {
    default: String(DEFAULT_CONCURRENCY),
    description: `Part uploads in flight at once, 1 to ${MAX_CONCURRENCY} (default ${DEFAULT_CONCURRENCY})`,
    flag: { type: 'string', value: 'n' },
  }),
  Retries: row('retries', ['deploy'], {
    default: String(DEFAULT_RETRIES),
    description: `Attempts after the first for a failed request, 0 to ${MAX_RETRIES} (default ${DEFAULT_RETRIES})`,
    flag: { type: 'string', value: 'n' },
  }),
  MaxRetryAfter: row('max-retry-after', ['deploy'], {
    default: String(DEFAULT_MAX_RETRY_AFTER_SECONDS),
    description:
      `The longest wait a rate-limited service may ask for, 0 to ${MAX_RETRY_AFTER_SECONDS} s; ` +
      `longer fails at once (default ${DEFAULT_MAX_RETRY_AFTER_SECONDS})`,
    flag: { type: 'string', value: 's' },
  }),
  RequestTimeout: row('request-timeout', ['deploy'], {
    default: String(DEFAULT_REQUEST_TIMEOUT_SECONDS),
    description: `Seconds a request may make no progress (default ${DEFAULT_REQUEST_TIMEOUT_SECONDS})`,
    flag: { type: 'string', value: 's' },
  }),
  DryRun: row('dry-run', ['deploy', 'sweep'], {
    default: 'false',
    description: 'Plan only: collect and hash the files, print the digest, call nothing (no token needed)',
    flag: {
      type: 'boolean',
      help: { sweep: 'List the previews it would retire, and change nothing' },
    },
  }),
  SkipUnchanged: row('skip-unchanged', ['deploy'], {
    default: 'true',
    description: "On a preview, reuse the preview's last site when the files are unchanged",
  }),
  ReuseReviewed: row('reuse-reviewed', ['deploy'], {
    default: 'true',
    description:
      'On a release, publish instead of uploading the site of a namespace of the game that serves this very build (the same digest, read from its record): 0 bytes uploaded (default; --no-reuse-reviewed to upload anyway)',
    flag: { type: 'boolean', negatable: true },
  }),
  SiteRecord: row('site-record', ['deploy'], {
    default: 'true',
    description:
      "Put the record of the build on the site, at /.well-known/gamehost.json: commit, ref, digest, each file's path, size and SHA-256 (default; --no-site-record to leave it out)",
    flag: { type: 'boolean', negatable: true },
  }),
  AllowOlder: row('allow-older', ['deploy'], {
    default: 'false',
    description:
      "Publish even when this run's commit is behind the one the namespace serves (by its record); default: publish nothing then",
    flag: { type: 'boolean' },
  }),
  CompareWith: row('compare-with', ['deploy'], {
    default: 'prod',
    description:
      'Namespace whose served build (its record) the sizes are compared with, in the summary and comment; empty: no comparison',
    flag: { type: 'string', value: 'name-id' },
  }),
  IfNoToken: row('if-no-token', ['deploy'], {
    default: 'auto',
    description: 'What an empty token means: auto (skip on fork pull requests, fail elsewhere), fail or skip',
  }),
  Comment: row('comment', ['deploy'], {
    default: 'true',
    description: 'On pull requests, keep one comment per preview on the pull request',
  }),
  PullRequest: row('pull-request', ['deploy'], {
    description: 'On workflow_run only: the pull request whose build this run deploys',
    // The CLI has no workflow_run; its close shows the number on the page.
    flag: {
      type: 'string',
      value: 'n',
      commands: ['close'],
      help: { close: 'The number of the pull request, shown on the page' },
    },
  }),
  GitHubToken: row('github-token', ['deploy', 'sweep'], {
    default: '${{ github.token }}',
    secret: true,
    description: 'Token for the pull-request comment; needs pull-requests: write',
    // The sweep asks GitHub whether each pull request is open, from the CLI too.
    flag: {
      type: 'string',
      value: 'token',
      env: GITHUB_TOKEN_ENV,
      commands: ['sweep'],
      help: {
        sweep: `GitHub token that may read the repository's pull requests; default the ${GITHUB_TOKEN_ENV} environment variable`,
      },
    },
  }),
  NamespacePrefix: row('namespace-prefix', ['deploy', 'sweep'], {
    default: 'pr-',
    description:
      "The previews' namespaces are named <prefix><pull request number>, or <prefix><number>-<key> for one of several sites, as the deploy's namespace input makes them (default pr-)",
    flag: { type: 'string', value: 'prefix' },
  }),
  PreviewTtl: row('preview-ttl', ['deploy', 'sweep'], {
    default: '30d',
    description:
      "A preview not deployed for this long is retired by the sweep (each preview deploy's, and the sweep action's): days or hours, like 30d or 36h; 0: never (default 30d)",
    flag: { type: 'string', value: 'age' },
  }),
  MaxPreviews: row('max-previews', ['deploy', 'sweep'], {
    description:
      'At most this many pull requests keep a live preview: past it, the least recently deployed are retired first; empty: no cap',
    flag: { type: 'string', value: 'n' },
  }),
  FromNamespace: row('from-namespace', ['publish'], {
    description: 'Promote the build this namespace serves (or --version-id)',
    flag: { type: 'string', value: 'name-id' },
  }),
  Promote: row('promote', ['publish'], {
    default: 'build',
    description:
      "With from-namespace: build (its site and routes, on this namespace's own config) or version (its whole version, matchmaker included)",
    flag: { type: 'string', value: 'what' },
  }),
  ExpectDigest: row('expect-digest', ['publish'], {
    description: 'With from-namespace: promote only if it serves this build (its digest, sha256:...)',
    flag: { type: 'string', value: 'digest' },
  }),
  ExpectCommit: row('expect-commit', ['publish'], {
    description: 'With from-namespace: promote only if its build is of this commit (full or abbreviated)',
    flag: { type: 'string', value: 'sha' },
  }),
  FromBasicAuth: row('from-basic-auth', ['publish'], {
    secret: true,
    description:
      "user:password (from a secret) of a private from-namespace's host, to read which build it serves",
    flag: { type: 'string', value: 'user:password', env: 'GAMEHOST_FROM_BASIC_AUTH' },
  }),
  EnvironmentId: row('environment-id', ['servers'], {
    requiredIn: ['servers'],
    description: 'The environment whose servers to list (required)',
    flag: { type: 'string', value: 'id' },
  }),
  Tags: row('tags', ['servers'], {
    description: 'Only servers with all these tags: a JSON object, like \'{"region":"eu"}\'',
    flag: { type: 'string', value: 'json' },
  }),
  IncludeDestroyed: row('include-destroyed', ['servers'], {
    default: 'false',
    description: 'List destroyed servers too',
    flag: { type: 'boolean' },
  }),
  Limit: row('limit', ['servers'], {
    description: 'At most this many servers, the newest (default all)',
    flag: { type: 'string', value: 'n' },
  }),
  LobbyId: row('lobby-id', ['lobby-logs'], {
    requiredIn: ['lobby-logs'],
    description: 'The lobby (required)',
    flag: { type: 'string', value: 'id' },
  }),
  FailIfFailed: row('fail-if-failed', ['lobby-logs'], {
    default: 'true',
    description: 'Exit 1 when the lobby failed (default; --no-fail-if-failed to only warn)',
    flag: { type: 'boolean', negatable: true },
  }),
  GroupDisplayName: row('group-display-name', ['validate'], {
    description: 'A group display name to validate',
    flag: { type: 'string', value: 'name' },
  }),
  FailOnError: row('fail-on-error', ['validate'], {
    default: 'true',
    description: 'Exit 1 on a validation error (default; --no-fail-on-error to only warn)',
    flag: { type: 'boolean', negatable: true },
  }),
} as const satisfies Record<string, InputRow>

type InputKey = keyof typeof INPUTS

/** `Input.ApiUrl` is 'api-url'. */
export const Input = Object.fromEntries(Object.entries(INPUTS).map(([key, r]) => [key, r.name])) as {
  readonly [K in InputKey]: string
}

const INPUT_ROWS: readonly InputRow[] = Object.values(INPUTS)

export function inputRow(name: string): InputRow | undefined {
  return INPUT_ROWS.find((r) => r.name === name)
}

export function inputsOf(action: ActionName): InputRow[] {
  return INPUT_ROWS.filter((r) => r.actions.includes(action))
}

export function secretInputs(action: ActionName): string[] {
  return inputsOf(action)
    .filter((r) => r.secret)
    .map((r) => r.name)
}
