import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Secrets, masked, redactWrites, runSecrets, secretForms } from '../../src/common/secrets.ts'
import { inertJson, markdownCode, markdownText, visible } from '../../src/common/untrusted.ts'
import { escapeHtml } from '../../src/common/report.ts'

const TOKEN = 'gh.tok/en+1:a|b@c#d&e"f<g'
const PASSWORD = 'pa55:w0rd%zz'

function secrets(...values: string[]): Secrets {
  const s = new Secrets()
  for (const value of values) s.add(value)
  return s
}

/** Every text a form of the secret travels in, inside other text. */
function travelling(secret: string): Record<string, string> {
  const b64 = (text: string) => Buffer.from(text).toString('base64')
  return {
    plain: `Bearer ${secret} was refused`,
    base64: `metadata ${b64(secret)}`,
    base64url: `ray ${Buffer.from(secret).toString('base64url')}`,
    'base64, after 1 byte': b64(`x${secret}y`),
    'base64, after 2 bytes': b64(`xy${secret}`),
    'base64, inside a Basic header': `Basic ${b64(`user:${secret}`)}`,
    'URL-encoded': `https://h/?token=${encodeURIComponent(secret)}&a=1`,
    'URL-encoded, lower-case hex': encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (h) =>
      h.toLowerCase(),
    ),
    'form-encoded': new URLSearchParams({ token: secret }).toString(),
    'Markdown-escaped': secret.replace(/[!-/:-@[-`{-~]/g, '\\$&'),
    'Markdown-escaped, with word joiners': secret.replace(/[!-/:-@[-`{-~]/g, (c) =>
      c === '@' || c === '#' ? `\\${c}\u2060` : `\\${c}`,
    ),
    'in a Markdown table cell': `| \`${secret.replace(/\|/g, '\\|')}\` |`,
    'JSON-escaped': JSON.stringify({ message: `echo ${secret}` }),
    'HTML-escaped': `<p>${escapeHtml(secret)}</p>`,
    'URL-encoded, in a workflow command': `::error::${encodeURIComponent(secret).replace(/%/g, '%25')}`,
    'a workflow command property': `::error title=${secret.replace(/%/g, '%25').replace(/:/g, '%3A').replace(/,/g, '%2C')}::x`,
  }
}

describe('the redactor', () => {
  for (const secret of [TOKEN, PASSWORD, 'abcdefghijklmnopqrstuvwxyz0123456789']) {
    test(`removes every form of ${JSON.stringify(secret)}`, () => {
      const s = secrets(secret)
      for (const [form, text] of Object.entries(travelling(secret))) {
        const redacted = s.redact(text)
        assert.ok(redacted.includes('***'), `${form}: ${redacted}`)
        for (const shown of secretForms(secret))
          assert.ok(!redacted.includes(shown), `${form} still shows ${shown}: ${redacted}`)
      }
    })
  }

  test('the longest secret first: user:password leaves neither part', () => {
    const s = secrets(PASSWORD, `octo:${PASSWORD}`)
    assert.equal(s.redact(`creds octo:${PASSWORD}.`), 'creds ***.')
  })

  test('leaves other text as it is, and a run without secrets unchanged', () => {
    assert.equal(
      secrets(TOKEN).redact('Deployed site 4b9e2c71 at https://x/'),
      'Deployed site 4b9e2c71 at https://x/',
    )
    assert.equal(new Secrets().redact(TOKEN), TOKEN)
  })

  test('ignores empty and too short values, which would blank ordinary words', () => {
    const s = secrets('', 'ab')
    assert.equal(s.size, 0)
    assert.equal(s.redact('ab cd'), 'ab cd')
  })

  test('redacts the strings of a JSON-like value, keeping its shape', () => {
    const s = secrets(TOKEN)
    const signal = new AbortController().signal
    const value = { body: `x ${TOKEN}`, list: [TOKEN, 3], nested: { ok: true }, signal }
    assert.deepEqual(s.redactValue(value), { body: 'x ***', list: ['***', 3], nested: { ok: true }, signal })
    assert.equal(s.redactValue(value).signal, signal)
  })
})

describe("the run's redactor, before any escaping", () => {
  const SECRET = 'run-secret_[x]*y@z'
  runSecrets.add(SECRET)

  test('visible(), markdownText(), markdownCode() and inertJson() show the secret as ***', () => {
    assert.equal(visible(`echo ${SECRET}\n`), 'echo ***\\n')
    assert.equal(markdownText(`a ${SECRET}`), 'a \\*\\*\\*')
    assert.equal(markdownCode(SECRET), '`***`')
    assert.equal(inertJson({ message: SECRET, list: [`x${SECRET}`] }), '{"message":"***","list":["x***"]}')
  })
})

test('redactWrites: every text written to the stream is redacted; bytes pass as they are', () => {
  const s = 'stream-secret-42'
  runSecrets.add(s)
  const written: unknown[] = []
  const stream = { write: (chunk: unknown) => written.push(chunk) > 0 } as unknown as NodeJS.WriteStream
  redactWrites(stream)
  redactWrites(stream)
  stream.write(`error: ${s}\n`)
  const bytes = Buffer.from(s)
  stream.write(bytes)
  assert.deepEqual(written, ['error: ***\n', bytes])
})

test('masked: a secret set shows as the runner masks it, one not set as empty', () => {
  assert.equal(masked(TOKEN), '***')
  assert.equal(masked(''), '')
  assert.equal(masked(undefined), '')
})
