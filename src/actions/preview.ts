import { isValidDomain } from '../api/rules.ts'
import { formatBytes, plural } from '../common/format.ts'
import { markdownCode, markdownText } from '../common/untrusted.ts'
import type { Connection } from '../inputs/common.ts'
import type { Site, Target } from '../inputs/deploy.ts'
import { privateNote } from '../deploy/target/private.ts'

/**
 * What a preview's sticky comment remembers between runs, so a re-run can skip an unchanged build. The
 * namespace and domain are shown, never used: the namespace a run deploys to is read from the service.
 */
export interface PreviewState extends Partial<CompletedSite & PublishedVersion> {
  key: string
  namespaceNameId?: string
  namespaceId?: string
  domain?: string
}

interface CompletedSite {
  siteId: string
  siteName?: string
  uploadId?: string
  digest: string
  fileCount: number
  totalBytes: number
  commit?: string
}

interface PublishedVersion {
  versionId: string
  url?: string
  /** `active`, `pending`, ... */
  domainStatus?: string
  cnameTarget?: string
  /** Absent when the preview is public. */
  privateUser?: string
}

/** The state: the last thing in the comment, so that no text shown above it can stand in for it. */
const STATE = /<!-- gamehost-state ([A-Za-z0-9_-]+) -->\s*$/

/**
 * `namespace:pr-1 game:<game-id> api:<api-url>`: runs for one pull request that deploy to another game
 * or service (a matrix over games) keep a comment each, and never take each other's site for their own.
 */
export function previewKey(inputs: {
  connection: Pick<Connection, 'apiUrl' | 'gameId'>
  target: Target | { kind: 'name'; nameId: string }
  site: Pick<Site, 'name' | 'nameGiven'>
}): string {
  const { connection, target, site } = inputs
  const scope =
    target.kind !== 'none' && target.nameId
      ? `namespace:${target.nameId}`
      : target.kind === 'id'
        ? `namespace-id:${target.namespaceId.toLowerCase()}`
        : site.nameGiven
          ? `site:${site.name}`
          : 'site'
  return `${scope} game:${connection.gameId.toLowerCase()} api:${canonicalUrl(connection.apiUrl)}`
}

function canonicalUrl(url: string): string {
  try {
    return new URL(url).href.replace(/\/+$/, '')
  } catch {
    return url.trim().replace(/\/+$/, '')
  }
}

export function previewMarker(key: string): string {
  return `<!-- gamehost-preview ${encodeURIComponent(key)} -->`
}

export function stateComment(state: PreviewState): string {
  return `<!-- gamehost-state ${Buffer.from(JSON.stringify(state)).toString('base64url')} -->`
}

export function readState(body: string, key: string): PreviewState | undefined {
  if (!body.startsWith(previewMarker(key))) return undefined
  const encoded = STATE.exec(body)?.[1]
  if (!encoded) return { key }
  try {
    const state = JSON.parse(Buffer.from(encoded, 'base64url').toString()) as PreviewState
    return state.key === key ? state : { key }
  } catch {
    return { key }
  }
}

export function nextState(
  key: string,
  previous: PreviewState | undefined,
  update: Pick<PreviewState, 'namespaceNameId' | 'namespaceId' | 'domain'> & {
    completed?: CompletedSite
    published?: PublishedVersion
  },
): PreviewState {
  const state: PreviewState = { ...previous, key }
  if (update.namespaceId) {
    state.namespaceId = update.namespaceId
    state.namespaceNameId = update.namespaceNameId
  }
  if (update.domain && update.namespaceId) state.domain = update.domain
  if (update.completed) Object.assign(state, update.completed)
  if (update.published) {
    // A run that learnt no URL or domain state leaves none of an earlier run's standing for it.
    for (const field of ['url', 'domainStatus', 'cnameTarget', 'privateUser'] as const) delete state[field]
    const defined = Object.entries(update.published).filter(([, value]) => value !== undefined)
    Object.assign(state, Object.fromEntries(defined))
  }
  return state
}

export interface CommentView {
  /** Text: shown as it is, never read as Markdown. */
  title: string
  /** Markdown: what it holds from outside the caller escapes (untrusted.ts). */
  status: string
  state: PreviewState
  namespaceNameId?: string
  runUrl?: string
  /** https://github.com/owner/repo, to link the commit. */
  repositoryUrl?: string
  commit?: string
}

/**
 * Every value is code or escaped text, and linked only in the plain form of what it is (a host's URL, a
 * domain, a sha): a value from outside makes no link, image or mention, and cannot end its cell.
 */
export function renderComment(view: CommentView): string {
  const { state } = view
  const rows: Array<[string, string]> = []
  const preview = (url: string) => (PLAIN_URL.test(url) ? `[${url}](${url})` : markdownCode(url))
  const domainLink = (domain: string) =>
    isValidDomain(domain) ? `[${domain}](https://${domain}/)` : markdownCode(domain)
  // An active custom domain is the link shown first; one that is not serves nothing yet.
  const domainActive = state.domain !== undefined && state.domainStatus === 'active'
  if (state.domain && domainActive) rows.push(['Preview', domainLink(state.domain)])
  if (state.url) rows.push([domainActive ? 'Host' : 'Preview', preview(state.url)])
  if (state.domain && !domainActive) rows.push(['Domain', pendingDomain(state, state.domain, domainLink)])
  if (state.privateUser) rows.push(['Access', privateNote(markdownCode(state.privateUser))])
  if (state.siteId) {
    const files =
      typeof state.fileCount === 'number' && typeof state.totalBytes === 'number'
        ? ` (${plural(state.fileCount, 'file')}, ${formatBytes(state.totalBytes)})`
        : ''
    rows.push(['Site', `${markdownCode(state.siteId)}${files}`])
    // The name of the site reported, which a reused site got from an earlier commit.
    if (state.siteName) rows.push(['Site name', markdownCode(state.siteName)])
  }
  if (state.namespaceId) {
    rows.push([
      'Namespace',
      `${view.namespaceNameId ? `${markdownCode(view.namespaceNameId)} ` : ''}${markdownCode(state.namespaceId)}`,
    ])
  }
  if (state.versionId) rows.push(['Version', markdownCode(state.versionId)])
  if (state.digest) rows.push(['Digest', markdownCode(state.digest)])
  if (view.commit) {
    const short = view.commit.slice(0, 7)
    rows.push([
      'Commit',
      view.repositoryUrl && PLAIN_LINK.test(view.repositoryUrl) && SHA.test(view.commit)
        ? `[${short}](${view.repositoryUrl}/commit/${view.commit})`
        : markdownCode(short),
    ])
  }
  if (view.runUrl) {
    const label = markdownText(view.runUrl.split('/').pop() ?? '')
    rows.push([
      'Run',
      PLAIN_LINK.test(view.runUrl) ? `[${label}](${view.runUrl})` : markdownCode(view.runUrl),
    ])
  }
  // The first row heads the table: markdown has no table without a header, and an empty one shows.
  const table = rows.map(([k, v]) => `| ${k} | ${v} |`)
  if (table.length) table.splice(1, 0, '| --- | --- |')
  const head = `### ${markdownText(view.title)}\n\n`
  const tail = ['', ...table, ...(table.length ? [''] : []), stateComment(state)].join('\n')
  return head + boundedStatus(view.status, COMMENT_BODY_MAX - head.length - tail.length) + '\n' + tail
}

/** GitHub refuses a comment over 65,536 characters; the rest is for the marker (comment.ts). */
const COMMENT_BODY_MAX = 60_000

/** Cut between lines only: a line cut inside its code span would leave the rest of it read as Markdown. */
function boundedStatus(status: string, room: number): string {
  if (status.length <= room) return status
  const note = (left: number) =>
    `(${left.toLocaleString('en')} more characters of this account left out: a comment holds at most 65,536 characters; the run itself says the rest.)`
  const noteRoom = note(status.length).length + 2
  const kept: string[] = []
  let used = 0
  for (const line of status.split('\n')) {
    if (used + line.length + 1 + noteRoom > room) break
    kept.push(line)
    used += line.length + 1
  }
  return [...kept, '', note(status.length - used)].join('\n')
}

/** Never a link that serves nothing. */
function pendingDomain(state: PreviewState, domain: string, link: (domain: string) => string): string {
  if (state.domainStatus === undefined) return link(domain)
  if (state.domainStatus === 'pending') {
    const target = state.cnameTarget ? markdownCode(state.cnameTarget) : "the namespace's host name"
    return `${markdownCode(domain)} pending: create a CNAME record ${markdownCode(domain)} → ${target}`
  }
  return `${markdownCode(domain)} ${markdownText(state.domainStatus)}: it does not serve the build`
}

const PLAIN_URL = /^https?:\/\/[a-z0-9.-]+(:\d+)?\/$/

const PLAIN_LINK = /^https?:\/\/[A-Za-z0-9.-]+(:\d+)?(\/[A-Za-z0-9._~/-]*)?$/

const SHA = /^[0-9a-f]{7,64}$/i
