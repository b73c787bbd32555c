// Seen live through the committed bundle, as the runner runs it: a deploy the emulator's CDN serves
// says "Live at" with verified true; one whose host never serves the build (a server on 127.0.0.1
// that answers the old page, named by cdn-domain) is rolled back and fails saying what it served,
// in the log, the outputs and the job summary.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fetchLocally, startEmulator, type Emulator } from '../../src/emulator/index.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'

describe('dist/index.js: seen live, or rolled back', () => {
  let emulator: Emulator
  let stale: Server
  let staleCdn: string
  let defaults: Record<string, string>
  before(async () => {
    emulator = await startEmulator({ rateLimit: false })
    stale = createServer((req, res) => {
      req.resume()
      res.writeHead(404, { 'content-type': 'text/plain' })
      res.end('404 page not found\n')
    })
    await new Promise<void>((resolve) => stale.listen(0, '127.0.0.1', resolve))
    staleCdn = `http://localhost:${(stale.address() as AddressInfo).port}`
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(async () => {
    stale.close()
    await emulator.close()
  })

  const build = async (title: string) => {
    const dir = await tempDir()
    await writeTree(dir, {
      'index.html': `<title>${title}</title>`,
      'game.wasm': Buffer.from(`\0asm${title}`),
    })
    return dir
  }
  const deploy = (inputs: Record<string, string>) =>
    runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      inputs: { 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, comment: 'false', ...inputs },
    })
  const liveVersion = (nameId: string) =>
    emulator.namespaces(GAME).find((n) => n.nameId === nameId)!.versionId

  test('a deploy seen live, then one never served: rolled back to what the namespace served', async () => {
    const cdn = emulator.url.replace('127.0.0.1', 'localhost')
    const first = await deploy({ path: await build('served'), namespace: 'verified', 'cdn-domain': cdn })
    assert.equal(first.exitCode, 0, first.stdout)
    assert.equal(first.outputs.verified, 'true')
    const url = first.outputs.url!
    assert.match(
      first.stdout,
      new RegExp(
        // The 2 files, and the record of the build (site-record).
        `^Live at ${url}: seen after \\d+\\.\\d s \\(\\d+ checks?\\), 3 files matching the build$`,
        'm',
      ),
    )
    assert.match(first.stdout, new RegExp(`^::notice title=Deployed::Live at ${url}$`, 'm'))
    assert.match(first.summary, /seen live after/)

    const second = await deploy({
      path: await build('never served'),
      namespace: 'verified',
      'cdn-domain': staleCdn,
      'verify-timeout': '1',
    })
    assert.equal(second.exitCode, 1, second.stdout)
    assert.equal(second.outputs.verified, 'false')
    const staleUrl = second.outputs.url!
    assert.match(
      second.stdout,
      new RegExp(
        `^::error::Not live: ${staleUrl} did not serve this build within \\d+\\.\\d s \\(\\d+ checks\\): ${staleUrl} ` +
          `answered 404, not 200 with index\\.html\\. Namespace verified was put back on version ${first.outputs['version-id']}, which it served before\\.$`,
        'm',
      ),
    )
    assert.match(
      second.stdout,
      /The namespace serves version [0-9a-f-]+ again, as before this run\. A re-run publishes this build again/,
    )
    assert.equal(liveVersion('verified'), first.outputs['version-id'])
    assert.equal(
      (await fetchLocally(url)).text,
      '<title>served</title>',
      'the namespace serves the first build again',
    )
    assert.match(second.summary, /not seen live/)
    assert.doesNotMatch(second.stdout, /::notice title=Deployed::Live at/)
  })

  test('verify: false publishes without checking, and says so', async () => {
    const run = await deploy({
      path: await build('unchecked'),
      namespace: 'unchecked',
      'cdn-domain': staleCdn,
      verify: 'false',
    })
    assert.equal(run.exitCode, 0, run.stdout)
    assert.equal(run.outputs.verified, 'false')
    assert.match(run.stdout, /^::notice title=Deployed::Published at \S+ \(not checked: verify is false\)$/m)
  })
})
