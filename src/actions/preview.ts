import { formatBytes } from '../common/format.ts'
import type { DeployInputs } from '../inputs/deploy.ts'

/**
 * What a preview's sticky comment remembers between runs of one pull request: the last site and its
 * digest, so a re-run can skip an unchanged build. The namespace and domain are shown, never used:
 * which namespace a run deploys to is always read from the service. Kept in the comment as
 * base64url JSON in an HTML comment.
 */
export interface PreviewState {
  key: string
  namespaceNameId?: string
  namespaceId?: string
  domain?: string
  /** The last completed site, its name, and the digest of its files. */
  siteId?: string
  siteName?: string
  uploadId?: string
  digest?: string
  fileCount?: number
  totalBytes?: number
  commit?: string
  /** The version made for the last site and published to the namespace, and where it is served. */
  versionId?: string
  url?: string
}

const STATE = /<!-- gamehost-state ([A-Za-z0-9_-]+) -->/

/** One comment per namespace, or per explicit site name without a namespace. */
export function previewKey(
  inputs: Pick<DeployInputs, 'namespace' | 'namespaceId'>,
  siteNameInput: string,
): string {
  if (inputs.namespace) return `namespace:${inputs.namespace.nameId}`
  if (inputs.namespaceId) return `namespace-id:${inputs.namespaceId}`
  return siteNameInput ? `site:${siteNameInput}` : 'site'
}

export function previewMarker(key: string): string {
  return `<!-- gamehost-preview ${encodeURIComponent(key)} -->`
}

export function stateComment(state: PreviewState): string {
  return `<!-- gamehost-state ${Buffer.from(JSON.stringify(state)).toString('base64url')} -->`
}

/** The state in a comment body, when the body is this preview's comment. */
export function readState(body: string, key: string): PreviewState | undefined {
  if (!body.includes(previewMarker(key))) return undefined
  const encoded = STATE.exec(body)?.[1]
  if (!encoded) return { key }
  try {
    const state = JSON.parse(Buffer.from(encoded, 'base64url').toString()) as PreviewState
    return state.key === key ? state : { key }
  } catch {
    return { key }
  }
}

/** The state a run leaves: its namespace, and its site when one completed (else the earlier one). */
export function nextState(
  key: string,
  previous: PreviewState | undefined,
  update: {
    namespaceNameId?: string
    namespaceId?: string
    domain?: string
    completed?: {
      siteId: string
      siteName?: string
      uploadId?: string
      digest: string
      fileCount: number
      totalBytes: number
      commit?: string
    }
    published?: { versionId: string; url: string }
  },
): PreviewState {
  const state: PreviewState = { ...previous, key }
  if (update.namespaceId) {
    state.namespaceId = update.namespaceId
    state.namespaceNameId = update.namespaceNameId
  }
  if (update.domain && update.namespaceId) state.domain = update.domain
  if (update.completed) Object.assign(state, update.completed)
  if (update.published) Object.assign(state, update.published)
  return state
}

export interface CommentView {
  title: string
  status: string
  state: PreviewState
  namespaceNameId?: string
  runUrl?: string
  /** https://github.com/owner/repo, to link the commit. */
  repositoryUrl?: string
  commit?: string
}

/** The markdown of the sticky comment (without its marker). */
export function renderComment(view: CommentView): string {
  const { state } = view
  const rows: Array<[string, string]> = []
  if (state.url)
    rows.push(['Preview', PLAIN_URL.test(state.url) ? `[${state.url}](${state.url})` : `\`${state.url}\``])
  if (state.domain) rows.push(['Domain', `[${state.domain}](https://${state.domain}/)`])
  if (state.siteId) {
    const files =
      state.fileCount !== undefined && state.totalBytes !== undefined
        ? ` (${state.fileCount} files, ${formatBytes(state.totalBytes)})`
        : ''
    rows.push(['Site', `\`${state.siteId}\`${files}`])
    // The name of the site reported, which a reused site got from an earlier commit.
    if (state.siteName) rows.push(['Site name', escapeCell(state.siteName)])
  }
  if (state.namespaceId) {
    rows.push([
      'Namespace',
      `${view.namespaceNameId ? `\`${view.namespaceNameId}\` ` : ''}\`${state.namespaceId}\``,
    ])
  }
  if (state.versionId) rows.push(['Version', `\`${state.versionId}\``])
  if (state.digest) rows.push(['Digest', `\`${state.digest}\``])
  if (view.commit) {
    const short = view.commit.slice(0, 7)
    rows.push([
      'Commit',
      view.repositoryUrl ? `[${short}](${view.repositoryUrl}/commit/${view.commit})` : short,
    ])
  }
  if (view.runUrl) rows.push(['Run', `[${view.runUrl.split('/').pop()}](${view.runUrl})`])
  // The first row heads the table: markdown has no table without a header, and an empty one shows.
  const table = rows.map(([k, v]) => `| ${k} | ${v} |`)
  if (table.length) table.splice(1, 0, '| --- | --- |')
  return [
    `### ${view.title}`,
    '',
    view.status,
    '',
    ...table,
    ...(table.length ? [''] : []),
    stateComment(state),
  ].join('\n')
}

/** A URL that is safe as a Markdown link: a scheme, a host name, a port, nothing else. */
const PLAIN_URL = /^https?:\/\/[a-z0-9.-]+(:\d+)?\/$/

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|')
}
