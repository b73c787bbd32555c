// A stand-in for the part of the GitHub REST API the action uses: issue comments, paginated as GitHub
// paginates them (per_page, page, Link headers), written by several users, with tokens that may lack
// permission. Point GITHUB_API_URL at `url`.
import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface StubUser {
  login: string
  type: 'User' | 'Bot'
}

export interface StubComment {
  id: number
  body: string
  user: StubUser
  created_at: string
  updated_at: string
}

export interface StubDeployment {
  id: number
  ref: string
  environment: string
  /** Newest first, as GitHub lists them. */
  statuses: Array<{ state: string }>
}

export interface GitHubStub {
  url: string
  /** A deployment GitHub made for a job that declared `environment:`, with its first status. */
  addDeployment(repo: string, ref: string, environment: string, state?: string): StubDeployment
  deployments(repo: string): StubDeployment[]
  close(): Promise<void>
  /** Comments of an issue or pull request, oldest first. */
  comments(repo: string, issue: number): StubComment[]
  addComment(repo: string, issue: number, body: string, user?: StubUser): StubComment
  /** A pull request of `repo`, as GET /repos/{repo}/pulls/{number} answers it (open unless `state` says). */
  addPullRequest(
    repo: string,
    number: number,
    head: { repo: string | null; ref: string; sha: string },
    state?: 'open' | 'closed',
  ): void
  setPullRequestState(repo: string, number: number, state: 'open' | 'closed'): void
  /** GET of the list of pull requests answers this status (a GitHub failure) until set back to undefined. */
  failPullRequestList(status: number | undefined): void
  /** GET of that pull request answers this status (a GitHub failure) until set back to undefined. */
  failPullRequest(repo: string, number: number, status: number | undefined): void
  /**
   * A line of commits of `repo`, oldest first, for GET /repos/{repo}/compare/{base}...{head}: two of
   * one line are ahead, behind or identical; of two lines, diverged; a commit of none, 404.
   */
  addHistory(repo: string, commits: string[]): void
  requests: Array<{ method: string; path: string; status: number }>
}

export interface StubToken {
  user: StubUser
  /** False for a token without `pull-requests: write` / `issues: write`. */
  canComment: boolean
  /** True for a token with `deployments: write`. */
  canDeploy?: boolean
}

export async function startGitHubStub(tokens: Record<string, StubToken>): Promise<GitHubStub> {
  const threads = new Map<string, StubComment[]>()
  const pulls = new Map<
    string,
    { head: { repo: string | null; ref: string; sha: string }; state: 'open' | 'closed'; failWith?: number }
  >()
  const requests: GitHubStub['requests'] = []
  let listFailure: number | undefined
  const deployments = new Map<string, StubDeployment[]>()
  const histories = new Map<string, string[][]>()
  const compare = (repo: string, base: string, head: string) => {
    const lines = histories.get(repo) ?? []
    // As GitHub does, a commit may be abbreviated.
    const at = (line: string[], sha: string) => line.findIndex((commit) => commit.startsWith(sha))
    const lineOf = (sha: string) => lines.find((line) => at(line, sha) >= 0)
    const [baseLine, headLine] = [lineOf(base), lineOf(head)]
    if (!baseLine || !headLine) return undefined
    if (baseLine !== headLine) return 'diverged'
    const order = at(headLine, head) - at(baseLine, base)
    return order > 0 ? 'ahead' : order < 0 ? 'behind' : 'identical'
  }
  const deploymentsOf = (repo: string) => {
    if (!deployments.has(repo)) deployments.set(repo, [])
    return deployments.get(repo)!
  }
  let nextId = 1000
  const thread = (repo: string, issue: number) => {
    const key = `${repo}#${issue}`
    if (!threads.has(key)) threads.set(key, [])
    return threads.get(key)!
  }
  const addComment = (
    repo: string,
    issue: number,
    body: string,
    user: StubUser = { login: 'someone', type: 'User' },
  ) => {
    const now = new Date().toISOString()
    const comment = { id: nextId++, body, user, created_at: now, updated_at: now }
    thread(repo, issue).push(comment)
    return comment
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stub')
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        requests.push({ method: req.method ?? '', path: url.pathname, status })
        res
          .writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
          .end(JSON.stringify(body))
      }
      const auth = /^(?:token|bearer) (.+)$/i.exec(req.headers.authorization ?? '')?.[1]
      const token = auth ? tokens[auth] : undefined
      if (!token) return send(401, { message: 'Bad credentials', status: '401' })
      let body: { body?: unknown }
      try {
        body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString()) as { body?: unknown }) : {}
      } catch {
        return send(400, { message: 'Problems parsing JSON' })
      }

      // Like GitHub: a user's token reads its user; an installation token (a bot's) may not.
      if (url.pathname === '/user' && req.method === 'GET') {
        if (token.user.type === 'Bot')
          return send(403, { message: 'Resource not accessible by integration', status: '403' })
        return send(200, { login: token.user.login, type: token.user.type })
      }
      const list = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)\/comments$/.exec(url.pathname)
      if (list && req.method === 'GET') {
        const all = thread(list[1]!, Number(list[2]))
        const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 30) || 30, 100)
        const page = Math.max(Number(url.searchParams.get('page') ?? 1) || 1, 1)
        const last = Math.max(Math.ceil(all.length / perPage), 1)
        const link = (p: number, rel: string) => {
          const target = new URL(url.toString().replace('http://stub', `http://${req.headers.host}`))
          target.searchParams.set('per_page', String(perPage))
          target.searchParams.set('page', String(p))
          return `<${target.toString()}>; rel="${rel}"`
        }
        const links = []
        if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'))
        if (page > 1) links.push(link(1, 'first'), link(page - 1, 'prev'))
        return send(
          200,
          all.slice((page - 1) * perPage, page * perPage),
          links.length ? { link: links.join(', ') } : {},
        )
      }
      if (list && req.method === 'POST') {
        if (!token.canComment)
          return send(403, { message: 'Resource not accessible by integration', status: '403' })
        if (typeof body.body !== 'string') return send(422, { message: 'Validation Failed' })
        return send(201, addComment(list[1]!, Number(list[2]), body.body, token.user))
      }
      const pullList = /^\/repos\/([^/]+\/[^/]+)\/pulls$/.exec(url.pathname)
      if (pullList && req.method === 'GET') {
        if (listFailure) return send(listFailure, { message: 'Server Error' })
        // As GitHub: state=open by default, newest first, per_page up to 100.
        const state = url.searchParams.get('state') ?? 'open'
        const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 30) || 30, 100)
        const page = Math.max(Number(url.searchParams.get('page') ?? 1) || 1, 1)
        const all = [...pulls.entries()]
          .filter(([key, p]) => key.startsWith(`${pullList[1]}#`) && (state === 'all' || p.state === state))
          .map(([key, p]) => ({
            number: Number(key.split('#')[1]),
            state: p.state,
            head: {
              ref: p.head.ref,
              sha: p.head.sha,
              repo: p.head.repo === null ? null : { full_name: p.head.repo },
            },
          }))
          .sort((a, b) => b.number - a.number)
        return send(200, all.slice((page - 1) * perPage, page * perPage))
      }
      const pull = /^\/repos\/([^/]+\/[^/]+)\/pulls\/(\d+)$/.exec(url.pathname)
      if (pull && req.method === 'GET') {
        const found = pulls.get(`${pull[1]}#${pull[2]}`)
        if (!found) return send(404, { message: 'Not Found' })
        if (found.failWith) return send(found.failWith, { message: 'Server Error' })
        const { head } = found
        return send(200, {
          number: Number(pull[2]),
          state: found.state,
          head: { ref: head.ref, sha: head.sha, repo: head.repo === null ? null : { full_name: head.repo } },
          base: { ref: 'main', repo: { full_name: pull[1] } },
        })
      }
      const compared = /^\/repos\/([^/]+\/[^/]+)\/compare\/([^/]+)\.\.\.([^/]+)$/.exec(url.pathname)
      if (compared && req.method === 'GET') {
        const status = compare(compared[1]!, compared[2]!, compared[3]!)
        if (!status) return send(404, { message: 'Not Found' })
        return send(200, { status, ahead_by: 0, behind_by: 0, total_commits: 0, commits: [], files: [] })
      }
      const edit = /^\/repos\/([^/]+\/[^/]+)\/issues\/comments\/(\d+)$/.exec(url.pathname)
      if (edit && req.method === 'PATCH') {
        const comment = [...threads.entries()]
          .filter(([key]) => key.startsWith(`${edit[1]}#`))
          .flatMap(([, comments]) => comments)
          .find((c) => c.id === Number(edit[2]))
        if (!comment) return send(404, { message: 'Not Found' })
        if (!token.canComment)
          return send(403, { message: 'Resource not accessible by integration', status: '403' })
        if (typeof body.body !== 'string') return send(422, { message: 'Validation Failed' })
        comment.body = body.body
        comment.updated_at = new Date().toISOString()
        return send(200, comment)
      }
      if (edit && req.method === 'DELETE') {
        const owner = [...threads.entries()].find(
          ([key, comments]) =>
            key.startsWith(`${edit[1]}#`) && comments.some((c) => c.id === Number(edit[2])),
        )
        if (!owner) return send(404, { message: 'Not Found' })
        if (!token.canComment)
          return send(403, { message: 'Resource not accessible by integration', status: '403' })
        const [, comments] = owner
        comments.splice(
          comments.findIndex((c) => c.id === Number(edit[2])),
          1,
        )
        requests.push({ method: 'DELETE', path: url.pathname, status: 204 })
        res.writeHead(204).end()
        return
      }
      const deploymentList = /^\/repos\/([^/]+\/[^/]+)\/deployments$/.exec(url.pathname)
      if (deploymentList && req.method === 'GET') {
        const ref = url.searchParams.get('ref')
        const found = deploymentsOf(deploymentList[1]!).filter((d) => ref === null || d.ref === ref)
        return send(
          200,
          found.map(({ id, ref: r, environment }) => ({ id, ref: r, environment })),
        )
      }
      const statuses = /^\/repos\/([^/]+\/[^/]+)\/deployments\/(\d+)\/statuses$/.exec(url.pathname)
      const deployment = statuses && deploymentsOf(statuses[1]!).find((d) => d.id === Number(statuses[2]))
      if (statuses && !deployment) return send(404, { message: 'Not Found' })
      if (deployment && req.method === 'GET') return send(200, deployment.statuses)
      if (deployment && req.method === 'POST') {
        if (!token.canDeploy)
          return send(403, { message: 'Resource not accessible by integration', status: '403' })
        const state = (body as { state?: unknown }).state
        if (typeof state !== 'string') return send(422, { message: 'Validation Failed' })
        deployment.statuses.unshift({ state })
        return send(201, { state })
      }
      return send(404, { message: 'Not Found' })
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    comments: (repo, issue) => thread(repo, issue),
    addComment,
    addPullRequest: (repo, number, head, state = 'open') =>
      void pulls.set(`${repo}#${number}`, { head, state }),
    setPullRequestState: (repo, number, state) => void (pulls.get(`${repo}#${number}`)!.state = state),
    failPullRequestList: (status) => void (listFailure = status),
    failPullRequest: (repo, number, status) => void (pulls.get(`${repo}#${number}`)!.failWith = status),
    addHistory: (repo, commits) => histories.set(repo, [...(histories.get(repo) ?? []), commits]),
    addDeployment: (repo, ref, environment, state = 'success') => {
      const deployment = { id: nextId++, ref, environment, statuses: [{ state }] }
      deploymentsOf(repo).push(deployment)
      return deployment
    },
    deployments: (repo) => deploymentsOf(repo),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
