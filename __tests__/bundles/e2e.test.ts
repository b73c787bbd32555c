// Runs the committed dist/index.js exactly as the GitHub runner does, against the emulator.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { symlink } from 'node:fs/promises'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { contentTypeOf } from '../../src/deploy/collect/files.ts'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { siteFiles, tempDir, writeTree } from '../support/helpers.ts'
import { needsSymlinks } from '../support/platform.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const entry = path.join(root, 'dist/index.js')
const MiB = 1024 * 1024
const TOKEN = 'gamehost-demo-token'

describe('dist/index.js under a runner-like environment', () => {
  let emulator: Emulator
  let site: string
  let written: Map<string, Buffer>
  let defaults: Record<string, string>
  before(async () => {
    emulator = await startTestEmulator()
    site = await tempDir()
    written = await writeTree(site, siteFiles(110, { name: 'build/level.data', size: 3.5 * MiB }))
    // Never uploaded: hidden files and folders, and a link that leads out of path.
    await writeTree(site, { '.env': 'API_KEY=secret', '.git/config': '[core]' })
    const outside = await tempDir()
    await writeTree(outside, { id_rsa: 'PRIVATE KEY' })
    if (!needsSymlinks) await symlink(path.join(outside, 'id_rsa'), path.join(site, 'leak.txt'))
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(() => emulator.close())

  test('deploys with provisioning; every byte reads back identical, with its content type', async () => {
    const run = await runAction({
      entry,
      defaults,
      cwd: root,
      env: { RUNNER_DEBUG: '1' },
      inputs: {
        'api-url': emulator.url,
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
        token: TOKEN,
        'game-id': '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
        path: site,
        namespace: 'e2e-preview',
        'namespace-display-name': 'E2E preview',
        'version-id': '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
        domain: 'e2e.preview.example.com',
        'lobby-count-max': '64',
        'max-players': '16',
        concurrency: '6',
      },
    })
    assert.equal(run.exitCode, 0, run.stdout + run.stderr)

    const { outputs } = run
    const siteId = outputs['site-id']!
    assert.match(siteId, /^[0-9a-f-]{36}$/)
    assert.match(outputs['upload-id']!, /^[0-9a-f-]{36}$/)
    const namespace = emulator
      .namespaces('4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86')
      .find((n) => n.nameId === 'e2e-preview')
    assert.equal(outputs['namespace-id'], namespace?.namespaceId)
    assert.deepEqual(namespace?.domains, ['e2e.preview.example.com'])
    assert.equal(outputs['file-count'], '111')
    assert.equal(outputs['total-bytes'], String([...written.values()].reduce((s, b) => s + b.length, 0)))
    const lines = [...written]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([p, b]) => JSON.stringify([p, b.length, createHash('sha256').update(b).digest('hex')]) + '\n')
    assert.equal(outputs.digest, `sha256:${createHash('sha256').update(lines.join('')).digest('hex')}`)
    assert.match(outputs.manifest!, /gamehost-manifest-\d+\.json$/)

    const view = emulator.site(siteId)!
    assert.equal(view.completed, true)
    assert.equal(view.parts.filter((p) => p.path === 'build/level.data').length, 1, 'one PUT per file')
    for (const [file, bytes] of written) {
      assert.ok((await emulator.readUploadedFile(siteId, file)).equals(bytes), `${file} reads back identical`)
      const served = await fetch(`${emulator.siteUrl(siteId)}${file}`)
      assert.equal(
        served.headers.get('content-type'),
        contentTypeOf(file) ?? 'application/octet-stream',
        file,
      )
      await served.arrayBuffer()
    }

    assert.deepEqual(
      // The record of the build (site-record) is the deploy's own, at its fixed path.
      view.files.filter((f) => /^\.|\/\.|leak/.test(f.path) && f.path !== '.well-known/gamehost.json'),
      [],
      'no hidden file and no link out of path',
    )
    assert.ok(
      needsSymlinks ||
        run.stdout.includes('::warning::Skipping leak.txt: it is a link that leads outside path'),
      run.stdout,
    )
    for (const group of ['Collect files', 'Provision', 'Upload'])
      assert.ok(run.stdout.includes(`::group::${group}`), group)
    // One progress for the files and the record of the build sent after them: the site's totals.
    assert.match(run.stdout, /Uploaded files 112\/112, /)
    assert.ok(
      !/signature=|\/_store\//.test(run.stdout + run.stderr),
      'no presigned URL in the log, debug included',
    )
    const unmasked = run.stdout.split('\n').filter((l) => l.includes(TOKEN) && !l.startsWith('::add-mask::'))
    assert.deepEqual(unmasked, [], 'the token is registered as a secret and never printed')
    assert.ok(run.stdout.includes(`::add-mask::${TOKEN}`))

    assert.match(run.summary, new RegExp(siteId))
    assert.match(run.summary, /e2e\.preview\.example\.com/)
    assert.match(run.summary, /Largest files/)
  })

  test('a matchmaker config the service rejects fails the step naming the field, and creates nothing', async () => {
    const sitesBefore = emulator.sites('4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86').length
    const run = await runAction({
      entry,
      defaults,
      cwd: root,
      inputs: {
        'api-url': emulator.url,
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
        token: TOKEN,
        'game-id': '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
        path: site,
        namespace: 'e2e-rejected',
        'version-id': '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
        'lobby-count-max': '32768',
        'max-players': '0',
      },
    })
    assert.equal(run.exitCode, 1)
    assert.ok(
      run.stdout.includes('::error title=lobby-count too high::lobby_count_max must be below 32768'),
      run.stdout,
    )
    assert.ok(run.stdout.includes('::error title=max-players too low::max_players must be at least 1'))
    assert.match(run.stdout, /::error::The matchmaker config is invalid: lobby-count\.too-high/)
    assert.equal(emulator.sites('4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86').length, sitesBefore)
    assert.ok(
      !emulator.namespaces('4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86').some((n) => n.nameId === 'e2e-rejected'),
    )
  })

  test('a service error is one ::error:: with status, code, message and ray id', async () => {
    const run = await runAction({
      entry,
      defaults,
      cwd: root,
      inputs: {
        'api-url': emulator.url,
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
        token: 'gamehost-other-token',
        'game-id': '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
        path: site,
      },
    })
    assert.equal(run.exitCode, 1)
    const errors = run.stdout.split('\n').filter((l) => l.startsWith('::error'))
    assert.equal(errors.length, 1, run.stdout)
    assert.match(
      errors[0]!,
      /^::error::games\.cdn\.createGameCdnSite failed: 403 API_FORBIDDEN: .+ \(ray id [0-9a-f-]{36}\)/,
    )
  })
})
