// Secrets never leave, through dist/index.js as the runner runs it and through the CLI's bundle: a
// service that echoes the bearer token (and the basic-auth password it was sent) in its error bodies,
// as JSON (message, metadata, ray id), as an HTML page, as text and as the store's XML, on the first
// call of every kind. No form of a secret (plain, base64, URL-encoded, Markdown-, JSON- or HTML-escaped)
// may show in stdout, stderr, the job summary, the outputs or the pull request's comment.
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { actionDefaults, runAction, type ActionRun } from '../../scripts/run-action.ts'
import { siteFiles, tempDir, writeTree } from '../support/helpers.ts'
import { startGitHubStub, type GitHubStub } from '../support/github-api.ts'
import { runCli as cli } from '../support/cli.ts'
import { runNewAction, type ActionName } from '../support/actions.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const entry = process.env.GAMEHOST_TEST_ENTRY ?? path.join(root, 'dist/index.js')
/** The token the emulator knows: the stand-in swaps the secret one for it. */
const SEEDED_TOKEN = 'gamehost-demo-token'
/** A token whose every form differs from it: base64, URL-encoding and each escaping change it. */
const TOKEN = 'gh.S3cr3t/t0k+en:x=y|z_#@!&<q>'
const PASSWORD = 'pa55/w0rd+%s3cret'
const BASIC_AUTH = `octo:${PASSWORD}`
const GITHUB_TOKEN = 'gh-write'
const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const VERSION = '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53'
const REPO = 'studio/space-game'
const BOT = { login: 'github-actions[bot]', type: 'Bot' as const }
/**
 * Runs of one deploy at most: each failed run was refused at least once more, and a kind of call is
 * refused twice at most (the record's PUT may take its first refusal in the run before, beside the files').
 */
const MAX_RUNS = 25
/** Where the stand-in takes the store's presigned PUTs. */
const STORE_PREFIX = '/__store'

/** What a test may never find: each secret as it travels. */
function forms(secret: string): Record<string, string> {
  return {
    plain: secret,
    base64: Buffer.from(secret).toString('base64'),
    'URL-encoded': encodeURIComponent(secret),
    'Markdown-escaped': secret.replace(/[!-/:-@[-`{-~]/g, '\\$&'),
    'JSON-escaped': JSON.stringify(secret).slice(1, -1),
  }
}

/**
 * The text with every escaping undone that could hide a secret from a search: Markdown's backslashes
 * and word joiners, HTML's entities, the runner's command escapes (`%25`, `%3A`, `%2C`).
 */
function unescaped(text: string): string {
  return text
    .replace(/\u2060/g, '')
    .replace(/\\(.)/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/%3A/g, ':')
    .replace(/%2C/g, ',')
    .replace(/%25/g, '%')
}

function assertNoSecret(where: string, output: string): void {
  // The runner's masks: read by the runner, never shown.
  const shown = output.replace(/^::add-mask::.*$/gm, '')
  for (const text of [shown, unescaped(shown)]) {
    for (const secret of [TOKEN, PASSWORD, BASIC_AUTH]) {
      for (const [form, value] of Object.entries(forms(secret)))
        assert.ok(!text.includes(value), `${where} shows the secret ${form}: ${value}\n${shown}`)
    }
  }
}

/** The kind of a call: its method and path, ids and names made one. */
function kindOf(method: string, url: string): string {
  const pathname = new URL(url, 'http://x').pathname
  return `${method} ${pathname.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, ':id').replace(/\/[^/]*\.[^/]*$/, '/:file')}`
}

interface EchoService {
  url: string
  /** The kinds of call answered with an echo so far. */
  echoed: Set<string>
  /** The echoes answered so far. */
  echoes(): number
  /** Every kind of call echoes again. */
  reset(): void
  close(): Promise<void>
}

/**
 * The service as a stand-in in front of the emulator: the first call of each kind is answered 503 (a
 * retry), the second 400 (the run fails), each with an error body that echoes the token and the
 * request's body (the basic-auth password in it), in turn as the service's JSON (message, metadata,
 * ray id, documentation), an HTML page, text; a store PUT as S3's XML. Any other call goes
 * through, the token swapped for the one the emulator knows, the emulator's address in its answers
 * made the stand-in's (so the presigned PUTs of the store come here too, under STORE_PREFIX).
 */
async function startEchoService(emulator: Emulator): Promise<EchoService> {
  const echoed = new Set<string>()
  const seen = new Map<string, number>()
  let echoes = 0
  let url = ''
  const server: Server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      response.writeHead(502)
      response.end(String(error))
    })
  })
  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    const kind = kindOf(request.method ?? 'GET', request.url ?? '/')
    const calls = (seen.get(kind) ?? 0) + 1
    seen.set(kind, calls)
    if (calls <= 2) {
      echoed.add(kind)
      echoes++
      echo(request, response, body, { status: calls === 1 ? 503 : 400, format: echoed.size + calls })
      return
    }
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.headers))
      if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name))
        headers[name] = name === 'authorization' ? `Bearer ${SEEDED_TOKEN}` : value
    const store = request.url?.startsWith(STORE_PREFIX)
    const target = store
      ? emulator.storeUrl + request.url!.slice(STORE_PREFIX.length)
      : emulator.url + request.url
    const upstream = await fetch(target, {
      method: request.method,
      headers,
      body: body.length ? body : undefined,
    })
    let answer = Buffer.from(await upstream.arrayBuffer())
    if ((upstream.headers.get('content-type') ?? '').includes('json'))
      answer = Buffer.from(
        answer
          .toString()
          .replaceAll(emulator.storeUrl, url + STORE_PREFIX)
          .replaceAll(emulator.url, url),
      )
    const out: Record<string, string> = {}
    for (const [name, value] of upstream.headers)
      if (!['content-length', 'transfer-encoding', 'connection', 'content-encoding'].includes(name))
        out[name] = value
    response.writeHead(upstream.status, out)
    response.end(answer)
  }
  function echo(
    request: IncomingMessage,
    response: ServerResponse,
    body: Buffer,
    { status, format: n }: { status: number; format: number },
  ): void {
    const sent = `${request.headers.authorization ?? ''} ${body.toString()}`
    const b64 = Buffer.from(sent).toString('base64')
    const rayId = `ray-${Buffer.from(TOKEN).toString('base64')}-${encodeURIComponent(TOKEN)}`
    if (request.url?.startsWith(STORE_PREFIX)) {
      response.writeHead(status === 503 ? 503 : 403, { 'content-type': 'application/xml' })
      response.end(
        `<Error><Code>${status === 503 ? 'SlowDown' : 'AccessDenied'}</Code><Message>${sent} ${b64}</Message></Error>`,
      )
      return
    }
    const format = n % 3
    if (format === 0) {
      response.writeHead(status, { 'content-type': 'application/json', 'rvt-ray-id': rayId })
      response.end(
        JSON.stringify({
          code: status === 503 ? 'API_SERVICE_UNAVAILABLE' : 'API_BAD_REQUEST',
          message: `Unavailable for ${sent}`,
          ray_id: rayId,
          metadata: { authorization: sent, base64: b64, url: encodeURIComponent(sent) },
          documentation: `https://docs.example.com/?token=${encodeURIComponent(TOKEN)}`,
        }),
      )
    } else if (format === 1) {
      response.writeHead(status, { 'content-type': 'text/html', 'rvt-ray-id': rayId })
      response.end(`<html><body><h1>${sent}</h1><p>${b64}</p></body></html>`)
    } else {
      response.writeHead(status, { 'content-type': 'text/plain' })
      response.end(`upstream refused ${sent} (${b64})`)
    }
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    echoed,
    echoes: () => echoes,
    reset: () => {
      echoed.clear()
      seen.clear()
      echoes = 0
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

describe('secrets never leave, against a service that echoes them', () => {
  let emulator: Emulator
  let github: GitHubStub
  let site: string
  let defaults: Record<string, string>
  before(async () => {
    emulator = await startTestEmulator()
    github = await startGitHubStub({ [GITHUB_TOKEN]: { user: BOT, canComment: true } })
    site = await tempDir()
    await writeTree(site, siteFiles(4, { name: 'game.data', size: 200 * 1024 }))
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(async () => {
    await emulator.close()
    await github.close()
  })

  test('dist/index.js: a pull request preview, re-run until every kind of call has echoed once', async () => {
    const service = await startEchoService(emulator)
    try {
      const runs: ActionRun[] = []
      for (let attempt = 0; attempt < MAX_RUNS; attempt++) {
        const refused = service.echoes()
        const run = await runAction({
          entry,
          defaults,
          cwd: root,
          githubToken: GITHUB_TOKEN,
          event: {
            name: 'pull_request',
            payload: {
              action: 'synchronize',
              number: 35,
              pull_request: {
                number: 35,
                head: { sha: 'aaaaaaa1111111', repo: { full_name: REPO } },
                base: { repo: { full_name: REPO } },
              },
            },
          },
          env: { GITHUB_API_URL: github.url, GITHUB_REF: 'refs/pull/35/merge' },
          inputs: {
            'api-url': service.url,
            'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
            token: TOKEN,
            'game-id': GAME,
            path: site,
            namespace: 'pr-35',
            'version-id': VERSION,
            'basic-auth': BASIC_AUTH,
            domain: 'pr-35.preview.example.com',
          },
        })
        runs.push(run)
        const where = `run ${attempt + 1}`
        assertNoSecret(`${where}: stdout`, run.stdout)
        assertNoSecret(`${where}: stderr`, run.stderr)
        assertNoSecret(`${where}: the job summary`, run.summary)
        assertNoSecret(`${where}: the outputs`, JSON.stringify(run.outputs))
        for (const comment of github.comments(REPO, 35)) assertNoSecret(`${where}: the comment`, comment.body)
        if (run.exitCode === 0) break
        assert.ok(service.echoes() > refused, `${where} failed, though no call was refused: ${run.stdout}`)
      }
      const last = runs.at(-1)!
      assert.equal(last.exitCode, 0, `the deploy got through in ${MAX_RUNS} runs: ${last.stdout}`)
      const kinds = [...service.echoed]
      for (const expected of [
        /^POST .*domains/,
        /^GET .*namespaces/,
        /^POST .*namespaces/,
        /^POST .*sites/,
        /^PUT .*:file/,
        /version/,
      ])
        assert.ok(
          kinds.some((kind) => expected.test(kind)),
          `a call ${expected} echoed: ${kinds.join(', ')}`,
        )
      // The echoes were shown, redacted: the failures and the retries name the refusals.
      const shown = runs.map((run) => run.stdout).join('\n')
      assert.match(shown, /for Bearer \*\*\*/)
      assert.match(shown, /AccessDenied/)
      assert.ok(github.comments(REPO, 35).some((c) => c.body.includes('gamehost-preview')))
      assert.ok(
        runs.some((run) => run.summary.includes('***')),
        'a summary shows a refusal, redacted',
      )
    } finally {
      await service.close()
    }
  })

  test('the CLI: deploy (text and --json) and publish, re-run until every kind of call has echoed once', async () => {
    const service = await startEchoService(emulator)
    try {
      const outputs: string[] = []
      let code: number | null = null
      for (let attempt = 0; attempt < MAX_RUNS && code !== 0; attempt++) {
        const refused = service.echoes()
        const run = await cli(
          [
            'deploy',
            '--api-url',
            service.url,
            '--game-id',
            GAME,
            '--path',
            site,
            '--namespace',
            'cli-35',
            '--version-id',
            VERSION,
            '--domain',
            'cli-35.preview.example.com',
            '--cdn-domain',
            emulator.url.replace('127.0.0.1', 'localhost'),
            ...(attempt % 2 ? ['--json'] : []),
          ],
          { GAMEHOST_TOKEN: TOKEN, GAMEHOST_BASIC_AUTH: BASIC_AUTH },
        )
        assertNoSecret(`CLI run ${attempt + 1}: stdout`, run.stdout)
        assertNoSecret(`CLI run ${attempt + 1}: stderr`, run.stderr)
        outputs.push(run.stderr)
        code = run.code
        if (code !== 0)
          assert.ok(service.echoes() > refused, `failed, though no call was refused: ${run.stderr}`)
      }
      assert.equal(code, 0, outputs.at(-1))
      assert.match(outputs.join('\n'), /Bearer \*\*\*/)

      const publish = await cli(
        [
          'publish',
          '--api-url',
          service.url,
          '--game-id',
          GAME,
          '--namespace',
          'cli-35',
          '--version-id',
          'previous',
          '--json',
        ],
        { GAMEHOST_TOKEN: TOKEN },
      )
      assert.notEqual(publish.code, 0, 'the echo fails the publish')
      assertNoSecret('CLI publish: stdout', publish.stdout)
      assertNoSecret('CLI publish: stderr', publish.stderr)
      assert.match(publish.stderr, /\*\*\*/)
    } finally {
      await service.close()
    }
  })
  test('the other actions and their commands: each fails on the echo, showing it redacted', async () => {
    const service = await startEchoService(emulator)
    const lobby = '7d4e1a2b-3c5f-4e6a-8b9c-0d1e2f3a4b5c'
    const operations: Array<[ActionName, Record<string, string>]> = [
      ['avatars', {}],
      ['servers', { 'environment-id': '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15' }],
      ['lobby-logs', { 'namespace-id': '3f6c2a9e-8b1d-4c7a-9e25-5d0b7a41c8f2', 'lobby-id': lobby }],
      ['validate', { 'group-display-name': 'Night Owls' }],
      ['publish', { namespace: 'production', 'version-id': VERSION }],
    ]
    try {
      for (const [name, inputs] of operations) {
        const connection = { 'api-url': service.url, 'game-id': GAME }
        service.reset()
        const run = await runNewAction(name, { ...connection, token: TOKEN, ...inputs })
        assert.notEqual(run.exitCode, 0, `${name}: the echo fails it`)
        for (const [where, text] of Object.entries({
          stdout: run.stdout,
          stderr: run.stderr,
          summary: run.summary,
          outputs: JSON.stringify(run.outputs),
        }))
          assertNoSecret(`the ${name} action: ${where}`, text)
        assert.match(run.stdout, /::error::.*\*\*\*/, `${name}: the failure shows the echo, redacted`)

        const flags = Object.entries({ ...connection, ...inputs }).flatMap(([flag, value]) => [
          `--${flag}`,
          value,
        ])
        for (const json of [[], ['--json']]) {
          // Each run meets the echo afresh.
          service.reset()
          const command = await cli([name, ...flags, ...json], { GAMEHOST_TOKEN: TOKEN })
          assert.equal(command.code, 1, `gamehost ${name}: ${command.stderr}`)
          assertNoSecret(`gamehost ${name} ${json.join('')}: stdout`, command.stdout)
          assertNoSecret(`gamehost ${name} ${json.join('')}: stderr`, command.stderr)
          assert.match(command.stderr, /\*\*\*/)
        }
      }
    } finally {
      await service.close()
    }
  })
})
