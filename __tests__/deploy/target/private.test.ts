import assert from 'node:assert/strict'
import { inspect } from 'node:util'
import { after, before, describe, test } from 'node:test'
import { Agent, request } from 'undici'
import { UsageError } from '../../../src/api/errors.ts'
import { memoryLogger } from '../../../src/common/logger.ts'
import { deploy, deployFailure } from '../../../src/deploy/pipeline.ts'
import { privateHostWaiter } from '../../../src/deploy/target/private.ts'
import type { Emulator } from '../../../src/emulator/index.ts'
import { basicAuthSecrets, basicAuthorization, readBasicAuth } from '../../../src/inputs/basic-auth.ts'
import { readInputs } from '../../../src/inputs/deploy.ts'
import { virtualTime } from '../../support/virtual-time.ts'
import { startTestEmulator } from '../../support/emulator.ts'
import { getter, tempDir, writeTree } from '../../support/helpers.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const PASSWORD = 'correct-horse-42'

describe('basic-auth', () => {
  const refused = (raw: string, message: RegExp) => {
    assert.throws(
      () => readBasicAuth(raw),
      (error: unknown) => {
        assert.ok(error instanceof UsageError)
        assert.match(error.message, message)
        const password = raw.slice(raw.indexOf(':') + 1)
        if (password)
          assert.ok(!error.message.includes(password), `the message shows the password: ${error.message}`)
        return true
      },
    )
  }

  test('is user:password, split at the first colon; empty is none', () => {
    assert.equal(readBasicAuth(''), undefined)
    const auth = readBasicAuth(`tester:${PASSWORD}:with-colon`)!
    assert.equal(auth.user, 'tester')
    assert.equal(auth.password, `${PASSWORD}:with-colon`)
  })

  test('a value without a colon, an empty or odd user, a short, long or multi-line password are refused without showing it', () => {
    refused('tester-and-no-colon-pass', /must be user:password .*it has no ':'/)
    refused(`:${PASSWORD}`, /the user name before ':' must be 1 to 64 .*\(it is empty\)/)
    refused(`test er:${PASSWORD}`, /the user name before ':' must be 1 to 64/)
    refused(`${'u'.repeat(65)}:${PASSWORD}`, /the user name before ':' must be 1 to 64/)
    refused('tester:short-1', /at least 8 characters/)
    refused(`tester:${'é'.repeat(37)}`, /at most 72 bytes/)
    refused(`tester:${PASSWORD}\nsecond-line`, /line break or another control character/)
  })

  test('written as JSON or inspected, the password is ***', () => {
    const auth = readBasicAuth(`tester:${PASSWORD}`)!
    for (const shown of [
      JSON.stringify({ auth }),
      JSON.stringify({ ...auth }),
      inspect(auth),
      inspect({ auth }),
    ])
      assert.ok(!shown.includes(PASSWORD) && shown.includes('tester'), shown)
  })

  test('what the log masks: the password, and the credentials as a Basic header carries them', () => {
    const auth = readBasicAuth(`tester:${PASSWORD}`)!
    const encoded = Buffer.from(`tester:${PASSWORD}`).toString('base64')
    assert.deepEqual(basicAuthSecrets(`tester:${PASSWORD}`), [PASSWORD, encoded])
    assert.equal(basicAuthorization(auth), `Basic ${encoded}`)
  })

  test('needs a namespace, a path and publish on', () => {
    const base = {
      'api-url': 'http://127.0.0.1:1',
      token: 't',
      'game-id': GAME,
      'basic-auth': `tester:${PASSWORD}`,
    }
    const extras: Array<Record<string, string>> = [
      { path: 'build' },
      { namespace: 'pr-1' },
      { path: 'build', namespace: 'pr-1', publish: 'false' },
    ]
    for (const extra of extras)
      assert.throws(
        () => readInputs(getter({ ...base, ...extra })),
        /basic-auth makes the namespace private before/,
      )
    assert.equal(readInputs(getter({ ...base, path: 'build', namespace: 'pr-1' })).target.kind, 'name')
  })
})

describe('a private deploy against the emulator', () => {
  let emulator: Emulator
  let site: string
  let temp: string
  before(async () => {
    emulator = await startTestEmulator()
    site = await tempDir()
    await writeTree(site, { 'index.html': '<title>private</title>' })
    temp = await tempDir()
  })
  after(() => emulator.close())

  const inputs = (extra: Record<string, string>) =>
    readInputs(
      getter({
        'api-url': emulator.url,
        token: 'gamehost-demo-token',
        'game-id': GAME,
        path: site,
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
        ...extra,
      }),
      { repository: 'studio/space-game', ref: 'refs/heads/main', sha: 'abcdef0123456789' },
    )

  test('the user and basic auth are set, and the host seen answering 401, before the version is published', async () => {
    const logger = memoryLogger()
    const from = emulator.requests.length
    const result = await deploy(inputs({ namespace: 'priv-order', 'basic-auth': `tester:${PASSWORD}` }), {
      logger,
      tempDir: temp,
      sleep: async () => {},
    })
    assert.equal(result.verification?.verified, true, logger.lines.join('\n'))
    assert.equal(result.published?.privateUser, 'tester')
    const calls = emulator.requests
      .slice(from)
      .filter((r) => r.method !== 'GET' && r.method !== 'HEAD')
      .map((r) => `${r.method} ${r.path.replace(/^\/cloud\/games\/[^/]+\/namespaces\/[^/]+/, '')}`)
    const order = ['POST /auth-user', 'PUT /cdn-auth', 'PUT /version'].map((call) => calls.indexOf(call))
    assert.ok(
      order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!)),
      calls.join('\n'),
    )
    const namespace = emulator.namespaces(GAME).find((n) => n.nameId === 'priv-order')!
    const url = `${emulator.url.replace('127.0.0.1', 'localhost')}`
    const host = `demo-game--priv-order.${new URL(url).host}`
    const status = async (authorization?: string) => {
      const answer = await request(`${emulator.url}/`, {
        headers: { host, ...(authorization ? { authorization } : {}) },
      })
      await answer.body.dump()
      return answer.statusCode
    }
    assert.ok(namespace)
    assert.equal(await status(), 401)
    assert.equal(await status(basicAuthorization({ user: 'tester', password: PASSWORD })), 200)
    assert.ok(!logger.lines.join('\n').includes(PASSWORD))
  })

  test('a host that never answers 401 stops the deploy before the publish, within verify-timeout', async () => {
    let now = 0
    const logger = memoryLogger()
    const wait = privateHostWaiter({
      dispatcher: new Agent(),
      signal: new AbortController().signal,
      clock: { now: () => now },
      stallMs: 5000,
      timeoutMs: 3000,
      logger,
      sleep: async (ms) => void (now += ms),
    })
    // The seed's prod namespace is public: its host answers (404: its site has no index.html).
    const url = `http://demo-game--prod.${new URL(emulator.url.replace('127.0.0.1', 'localhost')).host}/`
    await assert.rejects(
      wait(url),
      /still answers 404 without credentials after 3\.0 s: the build was not published/,
    )
  })

  test('a long wait for 401 says every 15 s what the host answers and how long is left', async () => {
    const time = virtualTime()
    const logger = memoryLogger()
    const wait = privateHostWaiter({
      dispatcher: new Agent(),
      signal: new AbortController().signal,
      clock: time.clock,
      timer: time.timer,
      stallMs: 5000,
      timeoutMs: 40_000,
      logger,
      sleep: time.sleep,
    })
    const url = `http://demo-game--prod.${new URL(emulator.url.replace('127.0.0.1', 'localhost')).host}/`
    await assert.rejects(wait(url), /still answers 404 without credentials after 40\.0 s/)
    assert.deepEqual(
      logger.lines.filter((l) => l.startsWith('Still waiting')),
      [15, 30].map(
        (s) =>
          `Still waiting for ${url} to answer 401 without credentials, after ${s}.0 s (${s === 15 ? 5 : 7} checks): ` +
          `${url} answers 404; ${40 - s} s left`,
      ),
    )
  })

  test('a failed wait leaves the namespace without the build', async () => {
    // verify-timeout 1 s, and a CDN that applies changes 60 s later: the host never answers 401 in time.
    const slow = await startTestEmulator({ publishDelayMs: 60_000 })
    try {
      const from = slow.requests.length
      const failed = await deploy(
        readInputs(
          getter({
            'api-url': slow.url,
            token: 'gamehost-demo-token',
            'game-id': GAME,
            path: site,
            namespace: 'priv-slow',
            'basic-auth': `tester:${PASSWORD}`,
            'verify-timeout': '1',
            'cdn-domain': slow.url.replace('127.0.0.1', 'localhost'),
          }),
        ),
        { logger: memoryLogger(), tempDir: temp },
      ).then(
        () => assert.fail('the deploy succeeded'),
        (error: unknown) => deployFailure(error).error,
      )
      assert.match(String(failed), /without credentials after \d\.\d s: the build was not published to it/)
      assert.ok(!slow.requests.slice(from).some((r) => r.method === 'PUT' && r.path.endsWith('/version')))
    } finally {
      await slow.close()
    }
  })
})
