// The browser's environment: what Chrome needs by name, nothing of the run's, and no value holding a
// registered secret. The real browser's part is in __tests__/bundles/smoke-isolation.test.ts.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Secrets } from '../../../src/common/secrets.ts'
import { browserEnv } from '../../../src/deploy/smoke/env.ts'

describe('browserEnv', () => {
  const secrets = new Secrets()
  secrets.add('tok-0123456789')

  test("Linux: the display, locale, temp and XDG variables, none of the run's", () => {
    const env = {
      PATH: '/usr/bin',
      HOME: '/home/runner',
      DISPLAY: ':99',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      TZ: 'UTC',
      TMPDIR: '/tmp',
      XDG_RUNTIME_DIR: '/run/user/1001',
      INPUT_TOKEN: 'tok-0123456789',
      'INPUT_BASIC-AUTH': 'reviewer:pw',
      'INPUT_API-URL': 'http://127.0.0.1:8787',
      GITHUB_TOKEN: 'ghs_x',
      GITHUB_REPOSITORY: 'studio/game',
      ACTIONS_RUNTIME_TOKEN: 'rt',
      ACTIONS_ID_TOKEN_REQUEST_URL: 'https://token',
      RUNNER_TEMP: '/home/runner/work/_temp',
      NODE_OPTIONS: '--require x',
      GAMEHOST_TOKEN: 'tok-0123456789',
      path: '/lowercase',
      SystemRoot: 'C:\\Windows',
    }
    assert.deepEqual(browserEnv(env, 'linux', secrets), {
      PATH: '/usr/bin',
      HOME: '/home/runner',
      DISPLAY: ':99',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      TZ: 'UTC',
      TMPDIR: '/tmp',
      XDG_RUNTIME_DIR: '/run/user/1001',
    })
  })

  test('a variable Chrome needs whose value holds a secret, in any form the redactor knows, is dropped', () => {
    const env = {
      PATH: '/usr/bin',
      HOME: '/home/tok-0123456789',
      LC_PAPER: `x.${Buffer.from('tok-0123456789').toString('base64')}`,
      TMPDIR: '/tmp',
    }
    assert.deepEqual(browserEnv(env, 'linux', secrets), { PATH: '/usr/bin', TMPDIR: '/tmp' })
  })

  test("Windows: what Chrome reads there, whatever the names' case; macOS as Linux", () => {
    const env = {
      Path: 'C:\\Windows\\system32',
      SystemRoot: 'C:\\Windows',
      LOCALAPPDATA: 'C:\\Users\\runner\\AppData\\Local',
      USERPROFILE: 'C:\\Users\\runner',
      'ProgramFiles(x86)': 'C:\\Program Files (x86)',
      PROGRAMFILES: 'C:\\Program Files',
      TEMP: 'C:\\Temp',
      INPUT_TOKEN: 'tok-0123456789',
      GITHUB_TOKEN: 'ghs_x',
    }
    assert.deepEqual(Object.keys(browserEnv(env, 'win32', secrets)), [
      'Path',
      'SystemRoot',
      'LOCALAPPDATA',
      'USERPROFILE',
      'ProgramFiles(x86)',
      'PROGRAMFILES',
      'TEMP',
    ])
    assert.deepEqual(Object.keys(browserEnv(env, 'darwin', secrets)), ['TEMP'])
  })
})
