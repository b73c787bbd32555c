// Created, then failed: what the files can fail with is found before anything is created. A file the
// process may not open fails the deploy before any namespace, domain or site exists; running out of
// file descriptors while the files upload is waited out and retried, and the deploy goes on.
import assert from 'node:assert/strict'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { UsageError } from '../../src/api/errors.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { openFile, type OpenFile } from '../../src/deploy/collect/read.ts'
import { deploy } from '../../src/deploy/pipeline.ts'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { readInputs } from '../../src/inputs/deploy.ts'
import { getter, siteFiles, tempDir, writeTree } from '../support/helpers.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const TOKEN = 'gamehost-demo-token'
const VERSION = '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53'

describe('the files are opened before anything is created', () => {
  let site: string
  let temp: string
  let emulator: Emulator
  before(async () => {
    site = await tempDir()
    await writeTree(site, siteFiles(24))
    temp = await tempDir()
    emulator = await startTestEmulator({ rateLimit: false })
  })
  after(() => emulator.close())
  const inputs = (extra: Record<string, string> = {}) =>
    readInputs(getter({ 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, path: site, ...extra }))

  test('a file the process may not open fails the deploy naming it: no namespace, no site was created', async () => {
    const sites = emulator.sites(GAME).length
    // publish: false creates the namespace before the upload: it is the first thing a late failure leaves.
    const open: OpenFile = (p, flags) => {
      if (path.basename(p) !== 'game.js') return openFile(p, flags)
      throw Object.assign(new Error(`EACCES: permission denied, open '${p}'`), { code: 'EACCES' })
    }
    const error = await deploy(
      inputs({
        namespace: 'unreadable',
        'version-id': VERSION,
        domain: 'unreadable.example.com',
        publish: 'false',
      }),
      { logger: memoryLogger(), tempDir: temp, open },
    ).catch((e: unknown) => e)
    assert.ok(error instanceof UsageError, String(error))
    assert.match(error.message, /could not be: game\.js \(EACCES: this process may not read it\)/)
    assert.equal(emulator.namespaces(GAME).filter((n) => n.nameId === 'unreadable').length, 0)
    assert.equal(emulator.sites(GAME).length, sites)
  })

  test('out of file descriptors while the files upload: each open waits and is retried by the retry engine, and the deploy completes', async () => {
    // The scan opens each file once (24), without hashing (no dry run, no skip-unchanged); the
    // upload's first 6 opens then find the table full.
    let opens = 0
    const open: OpenFile = (p, flags) => {
      if (++opens <= 24 || opens > 30) return openFile(p, flags)
      throw Object.assign(new Error(`EMFILE: too many open files, open '${p}'`), { code: 'EMFILE' })
    }
    const logger = memoryLogger()
    const result = await deploy(inputs({ concurrency: '8' }), {
      logger,
      tempDir: temp,
      open,
      retry: { sleep: async () => {} },
    })
    assert.ok(opens > 30)
    assert.equal(result.uploadCompleted, true)
    assert.equal(emulator.site(result.siteId!)?.completed, true)
    assert.equal(result.upload?.retries, 6)
    const lines = logger.lines.filter((l) => /descriptor|EMFILE|retry|closed/i.test(l))
    assert.equal(lines.length, 6, lines.join('\n'))
    for (const line of lines)
      assert.match(
        line,
        /^Upload of \S+: out of file descriptors \(EMFILE\): raise the limit \(ulimit -n\); retry 1 of 8 in \d+\.\d s$/,
      )
  })
})
