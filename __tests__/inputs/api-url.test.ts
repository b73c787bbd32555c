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
import { run as runServersAction } from '../../src/actions/servers.ts'
import { runSecrets } from '../../src/common/secrets.ts'
import { judgeApiUrl } from '../../src/inputs/api-url.ts'
import { readConnection } from '../../src/inputs/common.ts'
import { registerSecrets } from '../../src/inputs/register-secrets.ts'
import { getter } from '../support/helpers.ts'

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

/** Runs an action's run() in this process with `env` set: what it printed, and its job summary. */
async function runActionCapturing(
  run: () => Promise<void>,
  env: Record<string, string>,
): Promise<{ log: string; summary: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gamehost-api-url-'))
  const summaryFile = path.join(dir, 'summary')
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
