// The words of common/format.ts: counts, sizes and what an error says.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { capital, errorMessage, formatSeconds, messageOf, plural } from '../../src/common/format.ts'

test("errorMessage: the message, and the cause's where the message does not say it already", () => {
  const cause = new Error('connect ECONNREFUSED 127.0.0.1:1')
  assert.equal(errorMessage(new Error('no answer', { cause })), 'no answer: connect ECONNREFUSED 127.0.0.1:1')
  assert.equal(
    errorMessage(new Error(`no answer (${cause.message})`, { cause })),
    `no answer (${cause.message})`,
  )
  assert.equal(errorMessage(new Error('no answer', { cause: 'a string' })), 'no answer')
  assert.equal(errorMessage(new Error('no answer', { cause: new Error('') })), 'no answer')
  assert.equal(errorMessage('thrown text'), 'thrown text')
  assert.equal(messageOf(new Error('no answer', { cause })), 'no answer')
  assert.equal(messageOf(42), '42')
})

test('plural counts a noun, capital starts a sentence', () => {
  assert.deepEqual(
    [plural(0, 'file'), plural(1, 'file'), plural(2, 'check')],
    ['0 files', '1 file', '2 checks'],
  )
  assert.equal(capital('namespace demo was put back'), 'Namespace demo was put back')
  assert.equal(capital(''), '')
})

test('formatSeconds: a duration to the tenth of a second', () => {
  assert.deepEqual(
    [formatSeconds(0), formatSeconds(2649), formatSeconds(60_000)],
    ['0.0 s', '2.6 s', '60.0 s'],
  )
})
