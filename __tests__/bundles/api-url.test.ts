// api-url through the committed bundles (dist/index.js as the runner runs it, dist/cli/index.js): every
// spelling of credentials the WHATWG parser reads is refused before any request, and the password shows
// on no line (debug and --verbose included), in no job summary, output or error. Plain http to a host
// that is not this machine is warned of, in the log and in the job summary.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { runCli } from '../support/cli.ts'
import { GAME, root } from '../support/actions.ts'
import { tempDir, writeTree } from '../support/helpers.ts'

const PASSWORD = 'pa55-w0rd-Leak'

/** The password in any form a text could show it: as written, percent-encoded, in base64. */
function leaks(text: string): boolean {
  const forms = [PASSWORD, encodeURIComponent(PASSWORD), Buffer.from(PASSWORD).toString('base64')]
  return forms.some((form) => text.includes(form))
}

describe('api-url through the bundles', () => {
  let server: Server
  let host: string
  let site: string
  let defaults: Record<string, string>
  const requests: string[] = []
  before(async () => {
    server = createServer((request, response) => {
      requests.push(`${request.method} ${request.url}`)
      response.writeHead(500).end()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`
    site = await tempDir()
    await writeTree(site, { 'index.html': '<h1>hi</h1>' })
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(() => server.close())

  const spellings = () => ({
    backslashes: `http:\\\\deployer:${PASSWORD}@${host}`,
    'one slash': `http:/deployer:${PASSWORD}@${host}`,
    'upper-case scheme': `HTTP://deployer:${PASSWORD}@${host}`,
    plain: `http://deployer:${PASSWORD}@${host}`,
    'a tab and a line break inside': `http://deployer:pa55-\tw0rd-\nLeak@${host}`,
  })

  test('the deploy action refuses each before any request; no line, output or summary holds the password', async () => {
    for (const [spelling, apiUrl] of Object.entries(spellings())) {
      const run = await runAction({
        entry: path.join(root, 'dist/index.js'),
        defaults,
        cwd: root,
        env: { RUNNER_DEBUG: '1' },
        inputs: { 'api-url': apiUrl, token: 'svc-token-1234', 'game-id': GAME, path: site },
      })
      assert.equal(run.exitCode, 1, spelling)
      const lines = (run.stdout + run.stderr).split('\n').filter((l) => !l.startsWith('::add-mask::'))
      assert.ok(
        lines.some((l) => l.startsWith('::error::api-url carries credentials')),
        `${spelling}: ${run.stdout}`,
      )
      assert.deepEqual(lines.filter(leaks), [], spelling)
      assert.ok(!leaks(run.summary), `${spelling}: ${run.summary}`)
      assert.ok(!leaks(JSON.stringify(run.outputs)), spelling)
    }
    assert.deepEqual(requests, [], 'no request reached the server')
  })

  test('the CLI refuses each before any request (exit 2); stdout and stderr, --verbose, hold no password', async () => {
    for (const [spelling, apiUrl] of Object.entries(spellings())) {
      const args = ['deploy', '--api-url', apiUrl, '--game-id', GAME, '--path', site, '--verbose']
      const run = await runCli(args, { GAMEHOST_TOKEN: 'svc-token-1234' })
      assert.equal(run.code, 2, `${spelling}: ${run.stderr}`)
      assert.match(run.stderr, /--api-url carries credentials/, spelling)
      assert.ok(!leaks(run.stdout + run.stderr), `${spelling}: ${run.stderr}`)
    }
    assert.deepEqual(requests, [], 'no request reached the server')
  })

  test('a query and a fragment are refused before any request', async () => {
    for (const [suffix, what] of [
      ['?region=eu', /::error::api-url '.*' has a query \(\?region=eu\)/],
      ['/#top', /::error::api-url '.*' has a fragment \(#top\)/],
    ] as const) {
      const run = await runAction({
        entry: path.join(root, 'dist/index.js'),
        defaults,
        cwd: root,
        inputs: {
          'api-url': `http://${host}${suffix}`,
          token: 'svc-token-1234',
          'game-id': GAME,
          path: site,
        },
      })
      assert.equal(run.exitCode, 1)
      assert.match(run.stdout, what)
    }
    assert.deepEqual(requests, [], 'no request reached the server')
  })

  test('plain http to another host: warned of in the log and the job summary, and by the CLI (dry runs: nothing is called)', async () => {
    const apiUrl = 'http://api.example.com'
    const warning = /api-url http:\/\/api\.example\.com is plain http:\/\/ to a host that is not this machine/
    const run = await runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      inputs: { 'api-url': apiUrl, token: '', 'game-id': GAME, path: site, 'dry-run': 'true' },
    })
    assert.equal(run.exitCode, 0, run.stdout)
    assert.match(run.stdout, new RegExp(`^::warning title=Token sent in clear text::${warning.source}`, 'm'))
    assert.match(run.summary, new RegExp(`Warning: ${warning.source}`))
    const cli = await runCli(['deploy', '--api-url', apiUrl, '--game-id', GAME, '--path', site, '--dry-run'])
    assert.equal(cli.code, 0, cli.stderr)
    assert.match(cli.stderr, /--api-url http:\/\/api\.example\.com is plain http:\/\/ to a host/)
  })
})
