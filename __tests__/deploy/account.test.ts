// What a failed run says a re-run does: "a re-run starts over" only where a re-run can succeed, and the
// input to fix where the same inputs would fail the same way. The outputs of a partial result.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { NetworkError, ServiceError, UsageError, ValidationFailedError } from '../../src/api/errors.ts'
import { deployResult } from '../support/deploy-result.ts'
import { deployOutputs, failureReport, rerunText } from '../../src/deploy/account.ts'

const partial = deployResult

const serviceError = (status: number, code: string, inputs?: string[]) =>
  new ServiceError({ operation: 'op', status, body: { code, message: 'm', ray_id: 'r' }, inputs })

test('a re-run starts over only when nothing is in its way and no input is at fault', () => {
  const startsOver = /^A re-run starts over: nothing this run did is in its way\.$/
  assert.match(rerunText(partial()), startsOver)
  assert.match(rerunText(partial(), serviceError(503, 'API_SERVICE_UNAVAILABLE')), startsOver)
  assert.match(rerunText(partial(), serviceError(429, 'API_RATE_LIMIT')), startsOver)
  assert.match(rerunText(undefined, new NetworkError('op failed: the connection was reset')), startsOver)

  const fixInput = 'A re-run with the same inputs fails the same way: fix the input the error names first.'
  assert.equal(rerunText(undefined, new UsageError('path: ...')), fixInput)
  assert.equal(
    rerunText(
      undefined,
      new ValidationFailedError('the matchmaker config', [{ path: ['x'], description: 'd' }]),
    ),
    fixInput,
  )
  assert.equal(
    rerunText(partial(), serviceError(400, 'TOKEN_INVALID', ['token'])),
    'A re-run with the same inputs fails the same way: fix token first.',
  )
  assert.equal(
    rerunText(partial(), serviceError(403, 'API_FORBIDDEN', ['game-id', 'token'])),
    'A re-run with the same inputs fails the same way: check game-id and token first.',
  )
  assert.equal(
    rerunText(partial(), serviceError(500, 'ERROR', ['namespace-id'])),
    'A re-run with the same inputs most likely fails the same way: check namespace-id first.',
  )
  assert.match(
    rerunText(partial(), serviceError(400, 'CDN_INVALID_DOMAIN')),
    /fails the same way .*CDN_INVALID_DOMAIN/,
  )
})

test('what was done is still said beside the input to fix', () => {
  const text = rerunText(
    partial({
      provisioned: { ...partial().provisioned, nameId: 'pr-7', namespaceId: 'ns-1', namespaceCreated: true },
    }),
    new UsageError('version-id ...'),
  )
  assert.match(text, /^Namespace pr-7 \(ns-1\) stays as it is; .* fix the input the error names first\.$/)
  const report = JSON.stringify(failureReport(new UsageError('version-id ...'), undefined))
  assert.doesNotMatch(report, /starts over/)
})

test('outputs of a partial result: the scan counts, and no site that holds nothing', () => {
  const outputs = deployOutputs(
    partial({ siteId: 'site-1', uploadId: 'upload-1', collected: { fileCount: 3, totalBytes: 1234 } }),
  )
  assert.equal(outputs['file-count'], 3)
  assert.equal(outputs['total-bytes'], 1234)
  assert.equal(outputs['site-id'], null)
  assert.equal(outputs['upload-id'], null)
  const done = deployOutputs(partial({ siteId: 'site-1', uploadId: 'upload-1', uploadCompleted: true }))
  assert.equal(done['site-id'], 'site-1', 'a completed site that was not published is one')
  assert.equal(done['upload-id'], 'upload-1')
})
