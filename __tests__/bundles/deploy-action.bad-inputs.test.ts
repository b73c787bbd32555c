// Every bad input fails the step through dist/index.js with one ::error:: naming the input, before any call.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { needsFifo } from '../support/platform.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

describe('bad inputs, through dist/index.js', () => {
  let emulator: Emulator
  let site: string
  let aFile: string
  let withFifo: string
  let defaults: Record<string, string>
  before(async () => {
    emulator = await startTestEmulator()
    site = await tempDir()
    await writeTree(site, { 'index.html': '<h1>hi</h1>', '.env': 'SECRET=1' })
    aFile = path.join(site, 'index.html')
    withFifo = await tempDir()
    await writeTree(withFifo, { 'index.html': '<h1>hi</h1>' })
    if (!needsFifo) execFileSync('mkfifo', [path.join(withFifo, 'stuck')])
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(() => emulator.close())

  const good = () => ({
    'api-url': emulator.url,
    token: 'gamehost-demo-token',
    'game-id': '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
    path: site,
  })
  const ns = { 'namespace-id': '00000000-0000-4000-8000-000000000000' }
  const VERSION = '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53'

  const cases: Array<[input: string, values: () => Record<string, string>, hint: RegExp]> = [
    ['api-url', () => ({ 'api-url': 'ftp://example.com' }), /http:\/\/ or https:\/\//],
    ['api-url', () => ({ 'api-url': 'example.com' }), /is not a URL/],
    ['api-url', () => ({ 'api-url': 'https://deployer:hunter2@example.com' }), /carries credentials/],
    ['api-url', () => ({ 'api-url': 'https://deployer:hun ter2@exa mple' }), /carries credentials/],
    ['token', () => ({ token: '' }), /secrets\.GAMEHOST_TOKEN/],
    ['game-id', () => ({ 'game-id': '' }), /is required/],
    ['game-id', () => ({ 'game-id': 'demo-game' }), /is not an id of the service: ids are UUIDs/],
    ['version-id', () => ({ namespace: 'pr-7', 'version-id': 'v1' }), /is not an id of the service/],
    ['namespace-id', () => ({ 'namespace-id': 'production' }), /is not an id of the service/],
    ['path', () => ({ path: path.join(site, 'missing') }), /does not exist/],
    ['path', () => ({ path: aFile }), /is a file/],
    [
      'path',
      () => ({ path: '' }),
      /nothing is to be provisioned \(namespace, domain, lobby-count-max\): nothing to do/,
    ],
    ['path', () => ({ path: '/' }), /is the root of the file system/],
    [
      'path',
      () => ({ path: withFifo }),
      /a site holds only regular files; this is not one: stuck \(a FIFO\)/,
    ],
    ['files', () => ({ files: '*.png' }), /no file under .* matches/],
    ['files', () => ({ files: '../**' }), /reaches outside path/],
    ['files', () => ({ files: '.env' }), /hidden files are skipped unless include-hidden/],
    ['namespace', () => ({ namespace: 'a-very-long-namespace', 'version-id': VERSION }), /longer than 16/],
    ['namespace', () => ({ namespace: '-pr', 'version-id': VERSION }), /single dashes/],
    ['namespace', () => ({ namespace: 'pr--7', 'version-id': VERSION }), /single dashes/],
    ['namespace', () => ({ namespace: 'Feature_X', 'version-id': VERSION }), /a-z and 0-9/],
    ['if-no-token', () => ({ 'if-no-token': 'never' }), /one of auto, fail, skip/],
    ['skip-unchanged', () => ({ 'skip-unchanged': 'no' }), /true or false/],
    [
      'namespace-display-name',
      () => ({ namespace: 'pr-7', 'version-id': VERSION, 'namespace-display-name': 'PR  7' }),
      /single spaces/,
    ],
    ['site-name', () => ({ 'site-name': 'my  site' }), /single spaces/],
    ['site-name', () => ({ 'site-name': 'x'.repeat(129) }), /longer than 128 bytes/],
    ['domain', () => ({ ...ns, domain: 'https://play.example.com' }), /has a protocol/],
    ['domain', () => ({ ...ns, domain: 'play.example.com/game' }), /has a path/],
    ['domain', () => ({ ...ns, domain: 'Play.Example.com' }), /lower case/],
    ['domain', () => ({ domain: 'play.example.com' }), /needs namespace or namespace-id/],
    [
      'domain',
      () => ({ ...ns, domain: '-play.example.com' }),
      /not a host name: its label '-play' starts or ends/,
    ],
    ['domain', () => ({ ...ns, domain: 'play..example.com' }), /not a host name: it has an empty label/],
    [
      'domain',
      () => ({ ...ns, domain: 'play.example.com.' }),
      /ends with '\.': leave it out \(play\.example\.com\)/,
    ],
    ['domain', () => ({ ...ns, domain: 'münchen.de' }), /punycode\) form, xn--mnchen-3ya\.de/],
    [
      'token',
      () => ({ token: 'gamehost-demo-token\nsecond-line' }),
      /holds a line break .*cannot be sent in an HTTP header/,
    ],
    ['token', () => ({ token: 'gamehost-demo-tøken→' }), /holds a character that is not Latin-1/],
    [
      'lobby-count-max',
      () => ({ ...ns, 'lobby-count-max': '-1', 'max-players': '8' }),
      /from 0 to 2147483647/,
    ],
    [
      'max-players',
      () => ({ ...ns, 'lobby-count-max': '8', 'max-players': '2147483648' }),
      /from 0 to 2147483647/,
    ],
    [
      'lobby-count-max',
      () => ({ 'lobby-count-max': '8', 'max-players': '8' }),
      /need namespace or namespace-id/,
    ],
    ['concurrency', () => ({ concurrency: '0' }), /from 1 to 256/],
    ['concurrency', () => ({ concurrency: '10000' }), /from 1 to 256/],
    ['retries', () => ({ retries: 'many' }), /from 0 to 20/],
    ['request-timeout', () => ({ 'request-timeout': '0' }), /from 1 to 3600/],
    ['max-retry-after', () => ({ 'max-retry-after': '-1' }), /from 0 to 3600/],
    ['include-hidden', () => ({ 'include-hidden': 'yes' }), /true or false/],
    ['publish', () => ({ ...ns, publish: 'yes' }), /true or false/],
    ['cdn-domain', () => ({ ...ns, 'cdn-domain': 'https://cdn.example.com/path' }), /neither a domain/],
    ['cdn-domain', () => ({ ...ns, 'cdn-domain': 'CDN example' }), /neither a domain/],
    ['dry-run', () => ({ 'dry-run': 'maybe' }), /true or false/],
  ]

  for (const [input, values, hint] of cases) {
    const skip = hint.source.includes('FIFO') && needsFifo
    test(`${input}: ${hint.source}`, { skip }, async () => {
      const before = emulator.requests.length
      const run = await runAction({
        entry: path.join(root, 'dist/index.js'),
        defaults,
        cwd: root,
        inputs: { ...good(), ...values() },
      })
      assert.equal(run.exitCode, 1, run.stdout)
      const errors = run.stdout.split('\n').filter((l) => l.startsWith('::error'))
      assert.equal(errors.length, 1, run.stdout)
      assert.ok(errors[0]!.startsWith(`::error::${input}`), errors[0])
      assert.match(errors[0]!, hint)
      assert.equal(emulator.requests.length, before, 'no call reached the service')
    })
  }

  test('a token with a line break fails before any file is read, and is shown on no line', async () => {
    const before = emulator.requests.length
    const run = await runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      env: { RUNNER_DEBUG: '1' },
      inputs: { ...good(), token: 'gamehost-s3cret\nsecond-line' },
    })
    assert.equal(run.exitCode, 1, run.stdout)
    const lines = (run.stdout + run.stderr).split('\n').filter((l) => !l.startsWith('::add-mask::'))
    assert.deepEqual(
      lines.filter((l) => l.includes('s3cret') || l.includes('second-line')),
      [],
    )
    assert.ok(
      lines.some((l) => l.startsWith('::error::token holds a line break')),
      run.stdout,
    )
    assert.ok(!run.stdout.includes('Collect files'), 'no file was collected or hashed')
    assert.equal(emulator.requests.length, before)
  })

  test('credentials in api-url are masked before anything is logged, and shown on no line, debug included', async () => {
    const run = await runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      env: { RUNNER_DEBUG: '1' },
      inputs: { ...good(), 'api-url': 'https://deployer:hunter2@example.com' },
    })
    assert.equal(run.exitCode, 1)
    const lines = (run.stdout + run.stderr).split('\n')
    assert.ok(lines.includes('::add-mask::hunter2'), run.stdout)
    assert.deepEqual(
      lines.filter((l) => l.includes('hunter2') && !l.startsWith('::add-mask::')),
      [],
    )
  })

  test('a matchmaker value the service rejects is refused before any call, with one annotation per field', async () => {
    const before = emulator.requests.length
    const run = await runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      inputs: {
        ...good(),
        namespace: 'pr-7',
        'version-id': '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
        'lobby-count-max': '0',
        'max-players': '8',
      },
    })
    assert.equal(run.exitCode, 1)
    assert.match(run.stdout, /::error title=lobby-count too low::lobby_count_max must be at least 1/)
    assert.equal(emulator.requests.length, before)
  })

  test('a dry run needs no token and calls nothing (hidden files left out)', async () => {
    await writeFile(path.join(site, 'extra.txt'), 'x')
    const before = emulator.requests.length
    const run = await runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      inputs: { ...good(), 'dry-run': 'true', token: '' },
    })
    assert.equal(run.exitCode, 0, run.stdout)
    assert.equal(run.outputs['file-count'], '2')
    assert.equal(run.outputs['site-id'], '')
    assert.match(run.outputs.digest!, /^sha256:[0-9a-f]{64}$/)
    assert.equal(emulator.requests.length, before)
  })
})
