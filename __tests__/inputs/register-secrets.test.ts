import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runSecrets } from '../../src/common/secrets.ts'
import { registerSecrets } from '../../src/inputs/register-secrets.ts'
import { getter } from '../support/helpers.ts'

// Issue 44: the CLI registered GAMEHOST_TOKEN as given (with its trailing \r) but sent it trimmed, so
// the service echoing the token it was sent was not redacted.
test('a secret is registered as it is sent: trimmed, so its echo is redacted', () => {
  registerSecrets(getter({ token: 'svc-token-echoed-1234\r\n', 'basic-auth': ' tester:pass-word-5678 ' }), [
    'token',
    'basic-auth',
  ])
  const echoed = runSecrets.redact(
    'the service said: token svc-token-echoed-1234 refused; user tester:pass-word-5678',
  )
  assert.ok(!echoed.includes('svc-token-echoed-1234'), echoed)
  assert.ok(!echoed.includes('pass-word-5678'), echoed)
})
