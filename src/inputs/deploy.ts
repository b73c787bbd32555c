import { UsageError, ValidationFailedError } from '../api/errors.ts'
import { domainToASCII } from 'node:url'
import {
  DISPLAY_NAME_MAX_BYTES,
  displayNameProblems,
  hostNameProblem,
  describeValidationPath,
  isValidDomain,
  matchmakerConfigProblems,
} from '../api/rules.ts'
import type { ValidationError } from '../api/types.ts'
import {
  checkNameId,
  checkDomainOutsideCdn,
  namedInputs,
  readBoolean,
  readCdnDomain,
  readChoice,
  readConnection,
  readInteger,
  readMatchmakerPair,
  readOptional,
  readOptionalId,
  readVerify,
  usage,
  type GetInput,
  type VerifySettings,
} from './common.ts'
import { Input, MAX_CONCURRENCY, MAX_RETRIES } from './constants.ts'
import {
  MAX_REQUEST_TIMEOUT_SECONDS,
  MAX_RETRY_AFTER_SECONDS,
  MAX_SMOKE_TEST_SECONDS,
} from '../common/timeouts.ts'
import { readBasicAuth, type BasicAuth } from './basic-auth.ts'
import { readHeaders } from './headers.ts'
import { readPreviewLimits } from './previews.ts'
import { inputAssignment, inputName } from '../common/input-naming.ts'

const WEB_ENGINES = ['auto', 'unity', 'godot', 'none'] as const
export type WebEngineChoice = (typeof WEB_ENGINES)[number]

export type DeployInputs = ReturnType<typeof readInputs>
export type Site = ReturnType<typeof readSite>
export type Transfer = ReturnType<typeof readTransfer>
type Matchmaker = { lobbyCountMax: number; maxPlayers: number }

interface NamespaceWork {
  /**
   * The version whose config the new version is made from, and the version a namespace created by
   * name starts on; undefined: the namespace's current one (the game's latest for a new namespace).
   */
  versionId: string | undefined
  domain: string | undefined
  matchmaker: Matchmaker | undefined
  /** Only with a path. */
  publish: boolean
  /** Undefined: the service says. */
  cdnDomain: string | undefined
  /** Undefined makes the namespace public again. */
  basicAuth?: BasicAuth
}

/** `id`: checked with the service to be the game's, and to be the one `namespace` names when both are given. */
export type Target =
  | { kind: 'none' }
  | (NamespaceWork & { kind: 'name'; nameId: string; displayName: string })
  | (NamespaceWork & { kind: 'id'; namespaceId: string; nameId: string | undefined })

export type NamespaceTarget = Exclude<Target, { kind: 'none' }>
export type TargetedInputs = DeployInputs & { target: NamespaceTarget }

export function hasTarget(inputs: DeployInputs): inputs is TargetedInputs {
  return inputs.target.kind !== 'none'
}

export interface RunContext {
  repository?: string
  ref?: string
  sha?: string
}

export function targetNameId(target: Target): string | undefined {
  return target.kind === 'none' ? undefined : target.nameId
}

const publishing = () => namedInputs('{path} and {namespace} (or {namespace-id}), with {publish} on')

/** Before any file is read. `context` is only asked for when site-name is empty. `closing` needs no path. */
export function readInputs(
  get: GetInput,
  context: RunContext | (() => RunContext) = {},
  options: { closing?: boolean } = {},
) {
  const dryRun = readBoolean(get, Input.DryRun)
  const connection = readConnection(get, 'the id of the game to deploy to', { optional: dryRun })
  const site = readSite(get, context)
  const target = readTarget(get, site.path)
  if (site.headers.length && !(target.kind !== 'none' && target.publish))
    throw usage`{headers} are routes of the published version: they need ${publishing()}`
  const verify = readVerify(get)
  const inputs = {
    connection,
    site,
    target,
    transfer: readTransfer(get),
    verify,
    smoke: readSmoke(get, target, verify),
    dryRun,
    skipUnchanged: readBoolean(get, Input.SkipUnchanged),
    reuseReviewed: readBoolean(get, Input.ReuseReviewed),
    ifNoToken: readChoice(get, Input.IfNoToken, ['auto', 'fail', 'skip'] as const),
    // The GitHub token is only read by the action.
    comment: readBoolean(get, Input.Comment),
    siteRecord: readBoolean(get, Input.SiteRecord),
    allowOlder: readBoolean(get, Input.AllowOlder),
    compareWith: readCompareWith(get),
    // The deploy of one preview sweeps the others.
    previews: readPreviewLimits(get),
  }
  if (!site.path && target.kind === 'none' && !options.closing)
    throw usage`{path} is empty (no site to upload) and nothing is to be provisioned ({namespace}, {domain}, {lobby-count-max}): nothing to do. Give {path}, the folder of the built site`
  return inputs
}

function readSite(get: GetInput, context: RunContext | (() => RunContext)) {
  const files = get(Input.Files)
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
  const given = get(Input.SiteName).trim()
  const name = given || defaultSiteName(typeof context === 'function' ? context() : context)
  checkDisplayName(Input.SiteName, name)
  return {
    path: readOptional(get, Input.Path),
    files: files.length ? files : ['**'],
    includeHidden: readBoolean(get, Input.IncludeHidden),
    name,
    // A preview without a namespace is known by a name given.
    nameGiven: Boolean(given),
    webEngine: readChoice(get, Input.WebEngine, WEB_ENGINES),
    failOnWarning: readBoolean(get, Input.FailOnWarning),
    requireIndex: readBoolean(get, Input.RequireIndex),
    headers: readHeaders(get(Input.Headers)),
  }
}

function readTarget(get: GetInput, path: string | undefined): Target {
  const nameId = readOptional(get, Input.Namespace)
  const namespaceId = readOptionalId(get, Input.NamespaceId)
  const versionId = readOptionalId(get, Input.VersionId)
  const displayNameInput = readOptional(get, Input.NamespaceDisplayName)
  if (nameId) {
    checkNameId(Input.Namespace, nameId)
    checkDisplayName(Input.NamespaceDisplayName, displayNameInput ?? nameId)
  } else if (displayNameInput) {
    throw usage`{namespace-display-name} is only used with {namespace}, which is empty`
  } else if (versionId && !namespaceId) {
    throw usage`{version-id} is only used with {namespace} or {namespace-id}, which are empty`
  }
  const hasNamespace = Boolean(nameId || namespaceId)

  const domain = readOptional(get, Input.Domain)
  if (domain) {
    if (!hasNamespace) throw usage`{domain} needs {namespace} or {namespace-id} to add it to`
    const problem = domainProblem(domain)
    if (problem) throw new UsageError(problem)
  }
  const matchmaker = readMatchmaker(get, hasNamespace)
  const publish = readBoolean(get, Input.Publish) && path !== undefined
  const cdnDomain = readCdnDomain(get)
  checkDomainOutsideCdn(domain, cdnDomain)
  const basicAuth = readBasicAuth(get(Input.BasicAuth).trim())
  if (basicAuth && !(hasNamespace && publish))
    throw usage`{basic-auth} makes the namespace private before the build is published to it: it needs ${publishing()}`
  const work: NamespaceWork = {
    versionId,
    domain,
    matchmaker,
    publish,
    cdnDomain,
    ...(basicAuth && { basicAuth }),
  }
  if (namespaceId) return { kind: 'id', namespaceId, nameId, ...work }
  if (nameId) return { kind: 'name', nameId, displayName: displayNameInput ?? nameId, ...work }
  return { kind: 'none' }
}

/** Checked here: the service can only validate a config against a namespace, which may not exist yet. */
function readMatchmaker(get: GetInput, hasNamespace: boolean): Matchmaker | undefined {
  const matchmaker = readMatchmakerPair(
    get,
    hasNamespace,
    namedInputs('{namespace} or {namespace-id} to validate against'),
  )
  if (!matchmaker) return undefined
  const problems = matchmakerConfigProblems(matchmaker.lobbyCountMax, matchmaker.maxPlayers)
  if (problems.length) throw matchmakerError(problems.map((path) => ({ path })))
  return matchmaker
}

export function matchmakerError(errors: ValidationError[]): ValidationFailedError {
  return new ValidationFailedError(
    'The matchmaker config',
    errors.map(({ path }) => ({ path, description: describeValidationPath(path) })),
  )
}

export function readTransfer(get: GetInput) {
  return {
    concurrency: readInteger(get, Input.Concurrency, 1, MAX_CONCURRENCY),
    retries: readInteger(get, Input.Retries, 0, MAX_RETRIES),
    requestTimeoutMs: 1000 * readInteger(get, Input.RequestTimeout, 1, MAX_REQUEST_TIMEOUT_SECONDS),
    maxRetryAfterMs: 1000 * readInteger(get, Input.MaxRetryAfter, 0, MAX_RETRY_AFTER_SECONDS),
  }
}

function readSmoke(get: GetInput, target: Target, verify: VerifySettings) {
  const enabled = readBoolean(get, Input.SmokeTest)
  const smoke = {
    enabled,
    // Undefined: found on the machine (deploy/smoke/browser.ts).
    browser: readOptional(get, Input.Browser),
    watchMs: readInteger(get, Input.SmokeTestSeconds, 1, MAX_SMOKE_TEST_SECONDS) * 1000,
  }
  if (!enabled) return smoke
  if (target.kind === 'none' || !target.publish)
    throw usage`{smoke-test} opens the namespace's URL once the build is published there: it needs ${publishing()}`
  if (!verify.enabled)
    throw usage`{smoke-test} runs once the URL is seen serving this build: it needs {verify} on (a browser opened sooner may be served the build before)`
  return smoke
}

/** The pull request a workflow_run deploy previews (the action only). */
export function readPullRequestNumber(get: GetInput): number | undefined {
  const value = readOptional(get, Input.PullRequest)
  if (!value) return undefined
  if (!/^[1-9][0-9]{0,9}$/.test(value))
    throw usage`{pull-request} '${value}' is not a pull request number: pass the number the build workflow saved, digits only (see docs/previews.md on previews of forks)`
  return Number(value)
}

export function missingTokenError(): UsageError {
  return usage`{token} is empty: pass the service token, e.g. token: \${{ secrets.GAMEHOST_TOKEN }} (or set ${inputAssignment(Input.IfNoToken, 'skip')} to skip the deploy without one)`
}

/**
 * `<repo> <ref> <short sha>`, as a display name the service accepts. Too long, the ref is cut, never the
 * short commit: it is what tells two builds of one long branch apart.
 */
export function defaultSiteName(context: RunContext): string {
  const fold = (text: string | undefined) => text?.replace(/\s+/g, ' ').trim() || undefined
  const repo = fold(context.repository?.split('/').pop())
  const ref = fold(
    context.ref
      ?.replace(/^refs\/heads\//, '')
      .replace(/^refs\/tags\//, '')
      .replace(/^refs\/pull\/(\d+)\/(merge|head)$/, 'pr-$1'),
  )
  const sha = fold(context.sha?.slice(0, 7))
  if (!repo && !ref && !sha) return `gamehost site ${new Date().toISOString()}`
  const commit = sha ? ` ${sha}` : ''
  const head = [repo, ref].filter(Boolean).join(' ')
  const room = DISPLAY_NAME_MAX_BYTES - Buffer.byteLength(commit)
  if (Buffer.byteLength(head) <= room) return (head + commit).trim()
  const ellipsis = '…'
  return (truncateUtf8(head, room - Buffer.byteLength(ellipsis)).trim() + ellipsis + commit).trim()
}

function truncateUtf8(text: string, maxBytes: number): string {
  let out = ''
  for (const char of text) {
    if (Buffer.byteLength(out + char) > maxBytes) break
    out += char
  }
  return out
}

function checkDisplayName(input: string, value: string): void {
  const problem = displayNameProblems(value)[0]
  if (!problem) return
  const why =
    problem === 'too-long'
      ? `is longer than ${DISPLAY_NAME_MAX_BYTES} bytes`
      : problem === 'too-short'
        ? 'is empty'
        : 'has whitespace the service refuses'
  throw new UsageError(
    `${inputName(input)} '${value}' ${why}: use 1 to ${DISPLAY_NAME_MAX_BYTES} bytes with single spaces only, none leading or trailing`,
  )
}

/** Why `domain` cannot be a namespace's custom domain, with the fix where one is clear. */
function domainProblem(domain: string): string | undefined {
  const base = `${inputName(Input.Domain)} '${domain}'`
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(domain))
    return `${base} has a protocol: give the host name only, like play.example.com`
  if (domain.includes('/')) return `${base} has a path: give the host name only, like play.example.com`
  // An internationalised name: the service takes only its ASCII form (what Node's URL parser makes of it).
  if ([...domain].some((char) => char.charCodeAt(0) > 0x7f)) {
    const ascii = domainToASCII(domain.replace(/\.$/, ''))
    return ascii && !hostNameProblem(ascii)
      ? `${base} is an internationalised name: the service takes only its ASCII (punycode) form, ${ascii}`
      : `${base} is not a valid domain: use a-z, 0-9, '.' and '-' (an internationalised name in its punycode form), like play.example.com`
  }
  if (/[A-Z]/.test(domain))
    return `${base} has upper-case letters: write it in lower case (${domain.toLowerCase()})`
  if (domain.endsWith('.') && isValidDomain(domain) && !hostNameProblem(domain.slice(0, -1)))
    return `${base} ends with '.': leave it out (${domain.slice(0, -1)}); the service would keep it as another domain`
  if (!isValidDomain(domain))
    return `${base} is not a valid domain: use 1 to 255 characters of a-z, 0-9, '.' and '-', like play.example.com`
  const problem = hostNameProblem(domain)
  return problem
    ? `${base} is not a host name: ${problem}. Use labels of 1 to 63 characters of a-z, 0-9 and inner '-', ` +
        'joined by single dots, at most 253 characters in all, like play.example.com'
    : undefined
}

function readCompareWith(get: GetInput): string | undefined {
  const nameId = readOptional(get, Input.CompareWith)
  return nameId && checkNameId(Input.CompareWith, nameId)
}
