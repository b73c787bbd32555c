// Two runs on one namespace through dist/index.js, as GitHub starts them: run A reaches the service
// through a stand-in that holds one of its calls (a step of its own) until run B has run through.
// No rollback takes down B's build, and no older build replaces a newer one; each account says so.
import assert from 'node:assert/strict'
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { startEmulator, type Emulator } from '../../src/emulator/index.ts'
import { actionDefaults, runAction, type ActionRun } from '../../scripts/run-action.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { startGitHubStub, type GitHubStub } from '../support/github-api.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'

const REPO = 'studio/space-game'
const SEED = 'c'.repeat(40)
const OLD = 'a'.repeat(40)
const NEW = 'b'.repeat(40)

/**
 * The service as run A sees it: every call passed on, but the first that `held` matches is answered
 * only once `meanwhile` has run (`after`: sent on first, its answer held; else held before it is sent).
 */
async function holdingProxy(
  target: string,
  held: { method: string; path: RegExp; after: boolean },
  meanwhile: () => Promise<unknown>,
): Promise<{ url: string; close: () => void }> {
  let holding: Promise<unknown> | undefined
  const pass = (req: IncomingMessage, res: ServerResponse, body: Buffer, then?: () => Promise<unknown>) => {
    const upstream = new URL(req.url!, target)
    const out = request(upstream, { method: req.method, headers: req.headers }, (answer) => {
      const chunks: Buffer[] = []
      answer.on('data', (c: Buffer) => chunks.push(c))
      answer.on(
        'end',
        () =>
          void (then ?? (async () => {}))().then(() => {
            res.writeHead(answer.statusCode!, answer.headers).end(Buffer.concat(chunks))
          }),
      )
    })
    out.end(body)
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const matches = !holding && req.method === held.method && held.path.test(req.url!.split('?')[0]!)
      if (!matches) return pass(req, res, body)
      holding = Promise.resolve().then(meanwhile)
      if (held.after) return pass(req, res, body, () => holding!)
      void holding.then(() => pass(req, res, body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() }
}

describe('two runs on one namespace, through dist/index.js', () => {
  let emulator: Emulator
  let github: GitHubStub
  let defaults: Record<string, string>
  before(async () => {
    // The second publish (run A's in the first test) never reaches the host.
    emulator = await startEmulator({ rateLimit: false, publishDelayMs: 200, faults: { lostPublishes: [2] } })
    github = await startGitHubStub({
      'gh-write': { user: { login: 'github-actions[bot]', type: 'Bot' }, canComment: true },
    })
    github.addHistory(REPO, [SEED, OLD, NEW])
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(async () => {
    await emulator.close()
    await github.close()
  })

  const build = async (title: string) => {
    const dir = await tempDir()
    await writeTree(dir, { 'index.html': `<title>${title}</title>`, 'game.js': `// ${title}` })
    return dir
  }
  const release = async (sha: string, inputs: Record<string, string>, apiUrl = emulator.url) =>
    runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      githubToken: 'gh-write',
      env: { GITHUB_API_URL: github.url, GITHUB_SHA: sha, GITHUB_REF: `refs/heads/${inputs.namespace}` },
      inputs: { 'api-url': apiUrl, token: TOKEN, 'game-id': GAME, 'verify-timeout': '60', ...inputs },
    })
  const ok = (run: ActionRun) => assert.equal(run.exitCode, 0, run.stdout)
  const live = (nameId: string) => emulator.namespaces(GAME).find((n) => n.nameId === nameId)!.versionId

  test("A, not seen live, leaves B's build live: no rollback over it, the account names B's version", async () => {
    ok(await release(SEED, { namespace: 'race', path: await build('seed') }))
    let b: ActionRun | undefined
    const proxy = await holdingProxy(
      emulator.url,
      { method: 'PUT', path: /\/namespaces\/[^/]+\/version$/, after: true },
      async () => (b = await release(NEW, { namespace: 'race', path: await build('B') })),
    )
    try {
      const a = await release(OLD, { namespace: 'race', path: await build('A') }, proxy.url)
      ok(b!)
      const bVersion = b!.outputs['version-id']!
      assert.equal(live('race'), bVersion, "B's build is still live")
      assert.equal(a.exitCode, 1, a.stdout)
      assert.match(
        a.stdout,
        new RegExp(`::error[^\\n]*another run published version '[^']+' \\(${bVersion}\\) to the namespace`),
      )
      assert.match(a.stdout, /It was not put back: namespace race serves the other run's build/)
      assert.doesNotMatch(a.stdout, /Put the namespace back/)
      assert.match(a.summary, new RegExp(bVersion))
    } finally {
      proxy.close()
    }
  })

  for (const verify of ['true', 'false']) {
    test(`a newer build published during an older run's upload (verify ${verify}): the older run publishes nothing`, async () => {
      const namespace = `order-${verify}`
      ok(await release(SEED, { namespace, path: await build('seed') }))
      let b: ActionRun | undefined
      const proxy = await holdingProxy(
        emulator.url,
        { method: 'POST', path: /^\/cloud\/uploads\/[^/]+\/complete$/, after: false },
        async () => (b = await release(NEW, { namespace, path: await build('new'), verify })),
      )
      try {
        const a = await release(OLD, { namespace, path: await build('old') }, proxy.url)
        ok(b!)
        ok(a)
        assert.equal(live(namespace), b!.outputs['version-id'], 'the newer build stays published')
        assert.match(
          a.stdout,
          new RegExp(
            `Another run published version '[^']+ bbbbbbb' \\([^)]+\\) to namespace ${namespace} meanwhile`,
          ),
        )
        assert.match(
          a.stdout,
          new RegExp(
            `Namespace ${namespace} serves commit bbbbbbb, newer than this run's aaaaaaa: nothing was published`,
          ),
        )
        assert.equal(a.outputs['version-id'] ?? '', '')
      } finally {
        proxy.close()
      }
    })
  }
})
