// api-url is judged as undici will send it (the WHATWG parser): every spelling of credentials it reads
// as user:password@host is refused before any call, and its parts are secrets before anything is logged.
// Issue 45: `http:\\user:pass@host` and `http:/user:pass@host` passed the old check (a regex on ://…@).
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { run as runDeployAction } from '../../src/actions/deploy.ts'
import { run as runServersAction } from '../../src/actions/servers.ts'
import { runSecrets } from '../../src/common/secrets.ts'
import { inputWarnings, judgeApiUrl } from '../../src/inputs/api-url.ts'
import { readConnection } from '../../src/inputs/common.ts'
import { registerSecrets } from '../../src/inputs/register-secrets.ts'
import { actionDefaults } from '../../scripts/run-action.ts'
import { root } from '../support/actions.ts'
import { getter, tempDir, writeTree } from '../support/helpers.ts'

/** @actions/core keeps the first job summary file it was given: one for the whole file, emptied each run. */
const summaryFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'gamehost-api-url-')), 'summary')
const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const PASSWORD = 'pa55-w0rd-Leak'

/** Every spelling the WHATWG parser reads as http://deployer:PASSWORD@127.0.0.1:port. */
function spellings(port: number): Record<string, string> {
  const host = `127.0.0.1:${port}`
  return {
    backslashes: `http:\\\\deployer:${PASSWORD}@${host}`,
    'one slash': `http:/deployer:${PASSWORD}@${host}`,
    'upper-case scheme': `HTTP://deployer:${PASSWORD}@${host}`,
    plain: `http://deployer:${PASSWORD}@${host}`,
    'a tab and a line break inside': `http://deployer:pa55-\tw0rd-\nLeak@${host}`,
  }
}

/** The password in any form a text could show it: as written, percent-encoded, in base64. */
function leaks(text: string): boolean {
  return [PASSWORD, encodeURIComponent(PASSWORD), Buffer.from(PASSWORD).toString('base64')].some((form) =>
    text.includes(form),
  )
}

describe('api-url credentials, in every spelling the parser reads', () => {
  let server: Server
  let port: number
  const requests: string[] = []
  before(async () => {
    server = createServer((request, response) => {
      requests.push(`${request.method} ${request.url}`)
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  after(() => server.close())

  test('each is refused by the reader, the URL not shown', () => {
    for (const [spelling, apiUrl] of Object.entries(spellings(port))) {
      const get = getter({ 'api-url': apiUrl, token: 'svc-token-1234', 'game-id': GAME })
      assert.throws(
        () => readConnection(get),
        (error: Error) => /carries credentials/.test(error.message) && !leaks(error.message),
        spelling,
      )
      assert.ok(judgeApiUrl(apiUrl).credentials.length, spelling)
    }
  })

  test('each has its password registered as a secret before anything is logged', () => {
    for (const [spelling, apiUrl] of Object.entries(spellings(port))) {
      registerSecrets(getter({ 'api-url': apiUrl }), [])
      const said = runSecrets.redact(
        `${PASSWORD} ${encodeURIComponent(PASSWORD)} ${Buffer.from(`deployer:${PASSWORD}`).toString('base64')}`,
      )
      assert.ok(!leaks(said), `${spelling}: ${said}`)
    }
  })

  test('percent-encoded user info is secret as typed and as decoded', () => {
    registerSecrets(getter({ 'api-url': 'https://deployer:s3cr%40t-pw@api.example.com' }), [])
    assert.equal(runSecrets.redact('s3cr@t-pw s3cr%40t-pw'), '*** ***')
  })

  test('a URL the parser refuses, with an @, is neither shown nor its user info let out', () => {
    const apiUrl = 'https://deployer:hun ter2#x@exa mple'
    registerSecrets(getter({ 'api-url': apiUrl }), [])
    assert.equal(runSecrets.redact('hun ter2#x'), '***')
    const get = getter({ 'api-url': apiUrl, token: 't', 'game-id': GAME })
    assert.throws(
      () => readConnection(get),
      (error: Error) => !error.message.includes('hun ter2'),
    )
  })

  test('the action fails on each before any request, and no line, debug included, holds the password', async () => {
    for (const [spelling, apiUrl] of Object.entries(spellings(port))) {
      const printed = await runActionCapturing(runServersAction, {
        'INPUT_API-URL': apiUrl,
        INPUT_TOKEN: 'svc-token-1234',
        'INPUT_GAME-ID': GAME,
        'INPUT_ENVIRONMENT-ID': '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15',
        RUNNER_DEBUG: '1',
      })
      const lines = printed.log.split('\n').filter((line) => !line.startsWith('::add-mask::'))
      assert.ok(
        lines.some((line) => /^::error::api-url carries credentials/.test(line)),
        `${spelling}: ${printed.log}`,
      )
      assert.deepEqual(lines.filter(leaks), [], spelling)
      assert.ok(!leaks(printed.summary), `${spelling}: ${printed.summary}`)
    }
    assert.deepEqual(requests, [], 'no request reached the server')
  })
})

describe('api-url: a path, a query or a fragment', () => {
  const refused: Array<[what: string, apiUrl: string, message: RegExp]> = [
    [
      'a path',
      'https://api.example.com/v1',
      /^api-url 'https:\/\/api\.example\.com\/v1' has a path \(\/v1\): .*give the base URL, https:\/\/api\.example\.com$/,
    ],
    [
      'a query',
      'https://api.example.com/?region=eu',
      /^api-url '.*' has a query \(\?region=eu\), .*give the base URL without it, https:\/\/api\.example\.com$/,
    ],
    [
      'a fragment',
      'https://api.example.com#top',
      /^api-url '.*' has a fragment \(#top\), .*give the base URL without it, https:\/\/api\.example\.com$/,
    ],
    [
      '/cloud, with its own hint',
      'https://api.example.com/cloud',
      /ends in \/cloud, which every call adds itself: give the base URL, https:\/\/api\.example\.com$/,
    ],
    [
      'a path holding an @, not shown',
      'https://api.example.com/a@b',
      /^api-url \(not shown: it holds an @\) has a path:/,
    ],
  ]
  for (const [what, apiUrl, message] of refused) {
    test(`${what} is refused by the reader`, () => {
      const get = getter({ 'api-url': apiUrl, token: 't', 'game-id': GAME })
      assert.throws(
        () => readConnection(get),
        (error: Error) => message.test(error.message),
      )
    })
  }

  test('the base URL, with or without its slash, is taken', () => {
    for (const apiUrl of ['https://api.example.com', 'https://api.example.com/', 'http://127.0.0.1:8787'])
      assert.equal(readConnection(getter({ 'api-url': apiUrl, token: 't', 'game-id': GAME })).apiUrl, apiUrl)
  })

  test('a query is refused before any call: the service never sees it (it used to, and was blamed for a path)', async () => {
    const requests: string[] = []
    const server = createServer((request, response) => {
      requests.push(`${request.method} ${request.url}`)
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"code":"API_NOT_FOUND"}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = server.address() as AddressInfo
      const printed = await runActionCapturing(runServersAction, {
        'INPUT_API-URL': `http://127.0.0.1:${port}?region=eu`,
        INPUT_TOKEN: 'svc-token-1234',
        'INPUT_GAME-ID': GAME,
        'INPUT_ENVIRONMENT-ID': '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15',
      })
      assert.match(printed.log, /::error::api-url '.*' has a query \(\?region=eu\)/)
      assert.deepEqual(requests, [])
    } finally {
      server.close()
    }
  })
})

describe('api-url: plain http to another host', () => {
  test('warns that the token travels in clear; loopback and https do not', () => {
    const warned = (apiUrl: string) => inputWarnings(getter({ 'api-url': apiUrl }))
    assert.deepEqual(warned('http://api.example.com'), [
      'api-url http://api.example.com is plain http:// to a host that is not this machine: the token travels in clear text, readable and replayable by anyone on the way. Use https://',
    ])
    assert.equal(warned('HTTP://10.0.0.5:8787').length, 1)
    for (const local of [
      'http://localhost:8787',
      'http://127.0.0.1:1',
      'http://127.8.9.10',
      'http://[::1]:3',
    ])
      assert.deepEqual(warned(local), [], local)
    for (const quiet of [
      'https://api.example.com',
      '',
      'http://u:pass1234@api.example.com',
      'http://api.example.com/x',
    ])
      assert.deepEqual(warned(quiet), [], `${quiet}: refused or fine, no warning`)
  })

  test('the action warns in its log and again in the job summary (a dry run: nothing is called)', async () => {
    const site = await tempDir()
    await writeTree(site, { 'index.html': '<h1>hi</h1>' })
    const defaults = await actionDefaults(path.join(root, 'action.yml'))
    const inputs = {
      ...defaults,
      'api-url': 'http://api.example.com',
      'game-id': GAME,
      path: site,
      'dry-run': 'true',
    }
    const env = Object.fromEntries(
      Object.entries(inputs).map(([name, value]) => [`INPUT_${name.toUpperCase()}`, value]),
    )
    const printed = await runActionCapturing(runDeployAction, {
      ...env,
      INPUT_TOKEN: '',
      'INPUT_GITHUB-TOKEN': '',
    })
    assert.match(
      printed.log,
      /^::warning title=Token sent in clear text::api-url http:\/\/api\.example\.com is plain http:\/\/ to a host that is not this machine/m,
    )
    assert.doesNotMatch(printed.log, /^::error/m)
    assert.match(
      printed.summary,
      /Warning: api-url http:\/\/api\.example\.com is plain http:\/\/ to a host that is not this machine/,
    )
  })
})

/** Runs an action's run() in this process with `env` set: what it printed, and its job summary. */
async function runActionCapturing(
  run: () => Promise<void>,
  env: Record<string, string>,
): Promise<{ log: string; summary: string }> {
  await writeFile(summaryFile, '')
  const saved = { ...process.env }
  Object.assign(process.env, env, { GITHUB_STEP_SUMMARY: summaryFile, GITHUB_OUTPUT: '' })
  const chunks: string[] = []
  const write = process.stdout.write.bind(process.stdout)
  process.stdout.write = (chunk: string | Uint8Array): boolean => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString())
    return true
  }
  const exitCode = process.exitCode
  try {
    await run()
  } finally {
    process.stdout.write = write
    process.exitCode = exitCode
    process.env = saved
  }
  return { log: chunks.join(''), summary: await readFile(summaryFile, 'utf8') }
}
