// Safe in a hostile world, through dist/index.js as the runner runs it: a file the job may not read
// fails the step before any namespace or site is created; a store whose answers trickle a byte at a
// time after a 200 holds the deploy no longer than the PUTs themselves.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { chmod } from 'node:fs/promises'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { actionDefaults, runAction, type RunActionOptions } from '../../scripts/run-action.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'
import { siteFiles, tempDir, writeTree } from '../support/helpers.ts'
import { needsModeBits } from '../support/platform.ts'
import { startServiceProxy, type ServiceProxy } from '../support/service-proxy.ts'

// GAMEHOST_TEST_ENTRY: another entry to run instead (a wrapper of src/actions/deploy.ts, to check before packaging).
const entry = process.env.GAMEHOST_TEST_ENTRY ?? path.join(root, 'dist/index.js')
const VERSION = '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53'

/**
 * How to run the step so that file permissions bind it: as it is when the tests do not run as root;
 * as root, through setpriv without the capabilities that bypass them (root then reads only what its
 * owner bits allow, as any user). Undefined when neither can be.
 */
function unprivileged(): Pick<RunActionOptions, 'node' | 'nodeArgs'> | undefined {
  if (process.getuid?.() !== 0) return {}
  const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p))
  return setpriv
    ? { node: setpriv, nodeArgs: ['--bounding-set=-dac_override,-dac_read_search', process.execPath] }
    : undefined
}

describe('dist/index.js and hostile files and stores', () => {
  let defaults: Record<string, string>
  before(async () => {
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })

  test(
    'a file the job may not read fails the step, naming it, before any namespace, domain or site is created',
    {
      skip:
        needsModeBits ||
        (unprivileged() === undefined && 'root without setpriv: permissions cannot bind the step'),
    },
    async () => {
      const emulator = await startTestEmulator({ rateLimit: false })
      after(() => emulator.close())
      const site = await tempDir()
      await writeTree(site, { ...siteFiles(6), 'keys/secret.key': 'key' })
      await chmod(path.join(site, 'keys/secret.key'), 0o000)
      const sites = emulator.sites(GAME).length
      const run = await runAction({
        entry,
        defaults,
        cwd: root,
        ...unprivileged(),
        inputs: {
          'api-url': emulator.url,
          token: TOKEN,
          'game-id': GAME,
          path: site,
          // A new namespace and a domain are made before the upload when nothing is published.
          namespace: 'unreadable-1',
          'version-id': VERSION,
          domain: 'unreadable-1.example.com',
          publish: 'false',
        },
      })
      assert.equal(run.exitCode, 1, run.stdout + run.stderr)
      assert.match(
        run.stdout,
        /^::error::path: every file of the site is opened before anything is created, and this one could not be: keys\/secret\.key \(EACCES: this process may not read it\)\./m,
      )
      assert.equal(emulator.namespaces(GAME).filter((n) => n.nameId === 'unreadable-1').length, 0)
      assert.equal(emulator.sites(GAME).length, sites, 'no site was created')
      assert.ok(!run.outputs['namespace-id'], 'no namespace-id output')
      assert.ok(!run.outputs['site-id'], 'no site-id output')
    },
  )

  describe('a store that answers 200 with its ETag, then trickles a byte of body every 200 ms for 20 s', () => {
    let emulator: Emulator
    let proxy: ServiceProxy
    const trickles = { started: 0, cut: 0 }
    before(async () => {
      emulator = await startTestEmulator({ rateLimit: false })
      // Each PUT passed on to the emulator's store and its answer sent back as it came, then trickled.
      proxy = await startServiceProxy(emulator, {
        answer: (res, store) => {
          res.writeHead(store.status, {
            ...(store.etag ? { etag: store.etag } : {}),
            'content-type': 'application/xml',
          })
          if (store.status < 200 || store.status >= 300) return void res.end(store.body)
          trickles.started++
          const started = Date.now()
          const timer = setInterval(() => {
            if (Date.now() - started < 20_000) res.write(' ')
            else {
              clearInterval(timer)
              res.end()
            }
          }, 200)
          res.on('close', () => {
            clearInterval(timer)
            if (!res.writableFinished) trickles.cut++
          })
        },
      })
    })
    after(async () => {
      await proxy.close()
      await emulator.close()
    })

    test('the deploy takes each answer with its headers, completes in seconds, and cuts the trickles off', async () => {
      const site = await tempDir()
      const written = await writeTree(site, siteFiles(6))
      const started = Date.now()
      const run = await runAction({
        entry,
        defaults,
        cwd: root,
        inputs: { 'api-url': proxy.url, token: TOKEN, 'game-id': GAME, path: site, 'request-timeout': '2' },
      })
      const took = Date.now() - started
      assert.equal(run.exitCode, 0, run.stdout + run.stderr)
      assert.ok(took < 10_000, `the step took ${took} ms: it waited for the answers' bodies`)
      // Each file's PUT, and the record's (site-record).
      assert.equal(trickles.started, written.size + 1, 'every PUT was answered by a trickle')
      const siteId = run.outputs['site-id']!
      assert.equal(emulator.site(siteId)?.completed, true)
      for (const [name, bytes] of written)
        assert.deepEqual(await emulator.readUploadedFile(siteId, name), bytes, name)
      assert.doesNotMatch(run.stdout, /retry \d+ of/)
      const puts = written.size + 1
      for (let i = 0; i < 50 && trickles.cut < puts; i++) await new Promise((r) => setTimeout(r, 20))
      assert.equal(trickles.cut, puts, 'every trickle was cut off')
    })
  })

  test('refused, reset and stalled PUTs: every byte arrives, each stalled PUT cut at request-timeout and sent again', async () => {
    const emulator = await startTestEmulator({
      rateLimit: false,
      // The README's example with fewer refusals: a part refused 4 times in a row at the end, alone,
      // waits 5 s for its retries (as a store that is down must be waited for), more would be long.
      faults: { seed: 25, putErrorRate: 0.1, putResetRate: 0.05, putStallCount: 2, apiErrorRate: 0.1 },
    })
    after(() => emulator.close())
    const site = await tempDir()
    const written = await writeTree(site, siteFiles(300))
    const run = await runAction({
      entry,
      defaults,
      cwd: root,
      // At 15% a part is refused 13 times running once in 10^11: the retries are never spent.
      inputs: {
        'api-url': emulator.url,
        token: TOKEN,
        'game-id': GAME,
        path: site,
        retries: '12',
        'request-timeout': '2',
      },
    })
    assert.equal(run.exitCode, 0, run.stdout + run.stderr)
    const siteId = run.outputs['site-id']!
    assert.equal(emulator.site(siteId)?.completed, true)
    for (const [name, bytes] of written)
      assert.deepEqual(await emulator.readUploadedFile(siteId, name), bytes, name)
    const faults = emulator.faults
    assert.equal(faults.putStalls, 2)
    assert.ok(faults.putErrors > 0 && faults.putResets > 0, JSON.stringify(faults))
    const lines = run.stdout.split('\n')
    assert.equal(
      lines.filter((l) => /: no answer within 2 s \(UND_ERR_HEADERS_TIMEOUT\); retry 1 of 12 in /.test(l))
        .length,
      2,
      run.stdout,
    )
  })
})
