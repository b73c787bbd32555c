// The uploader's decision table, outcome by outcome: what follows each thing an attempt can come to.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { retryPolicy } from '../../src/common/retry.ts'
import {
  decide,
  DESCRIPTOR_WAITS,
  PartUploadError,
  type AttemptState,
  type Outcome,
} from '../../src/deploy/upload/outcome.ts'

/** Backoff of 500 ms base, half of its ceiling plus half the jitter (random 0.5): 375 ms, 750, 1500... */
const policy = retryPolicy({ retries: 3, random: () => 0.5, maxElapsedMs: 60_000, sleep: async () => {} })

function state(overrides: Partial<AttemptState> = {}): AttemptState {
  return {
    describe: 'Upload of a.txt',
    retries: 0,
    descriptorWaits: 0,
    storedAtDescriptorWait: 0,
    storedMeanwhile: false,
    firstAttemptAt: 1_000,
    now: 1_000,
    concurrency: 8,
    ...overrides,
  }
}

const failure = { detail: 'the store answered 500 InternalError', status: 500 }

test('stored: the part is done', () => {
  assert.deepEqual(decide({ kind: 'stored' }, state(), policy), { kind: 'done' })
})

test('restart (a straggler at the end): sent again at once, with a line saying so', () => {
  assert.deepEqual(decide({ kind: 'restart', quiet: 'no progress for 1.2 s' }, state(), policy), {
    kind: 'send-again',
    note: 'Upload of a.txt: no progress for 1.2 s, while every other part has started: sent again',
  })
})

test('out of descriptors: fewer uploads at a time and a wait of 50 ms doubling; after DESCRIPTOR_WAITS, the upload stops', () => {
  const cause = Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' })
  const outcome: Outcome = { kind: 'out-of-descriptors', code: 'EMFILE', cause }
  assert.deepEqual(decide(outcome, state(), policy), { kind: 'fewer', waitMs: 50, code: 'EMFILE' })
  assert.deepEqual(decide(outcome, state({ descriptorWaits: 3 }), policy), {
    kind: 'fewer',
    waitMs: 400,
    code: 'EMFILE',
  })
  assert.deepEqual(decide(outcome, state({ descriptorWaits: 9, retries: 3 }), policy), {
    kind: 'fewer',
    waitMs: 2_000,
    code: 'EMFILE',
  })
  const action = decide(outcome, state({ descriptorWaits: DESCRIPTOR_WAITS, concurrency: 1 }), policy)
  assert.equal(action.kind, 'stop')
  assert.ok(action.error instanceof PartUploadError)
  assert.equal(
    action.error.message,
    'Upload of a.txt: out of file descriptors (EMFILE), even with 1 upload at a time and none ending for 10 waits: raise the limit (ulimit -n)',
  )
  assert.equal(action.error.retryable, false)
  assert.equal(action.error.cause, cause)
})

test('overload: retried after a backoff, and the refusal is handed to the adaptive limit', () => {
  const outcome: Outcome = {
    kind: 'overload',
    signal: '503',
    failure: { detail: 'the store answered 503 SlowDown', status: 503 },
  }
  assert.deepEqual(decide(outcome, state({ retries: 1 }), policy), {
    kind: 'retry',
    waitMs: 750,
    note: 'Upload of a.txt: the store answered 503 SlowDown; retry 2 of 3 in 0.8 s',
    overload: '503',
  })
})

test("retryable: retried after a backoff that doubles, or a first retry's when other PUTs were stored meanwhile", () => {
  const outcome: Outcome = { kind: 'retryable', failure }
  assert.deepEqual(decide(outcome, state(), policy), {
    kind: 'retry',
    waitMs: 375,
    note: 'Upload of a.txt: the store answered 500 InternalError; retry 1 of 3 in 0.4 s',
    overload: undefined,
  })
  const later = decide(outcome, state({ retries: 2 }), policy)
  assert.equal(later.kind === 'retry' && later.waitMs, 1_500)
  const lucky = decide(outcome, state({ retries: 2, storedMeanwhile: true }), policy)
  assert.equal(lucky.kind === 'retry' && lucky.waitMs, 375)
})

test('retryable with a code in its cause: the code leads the reason, the part is named once', () => {
  const cause = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' })
  const action = decide(
    {
      kind: 'overload',
      signal: 'connection lost',
      failure: { detail: 'other side closed', status: undefined, cause },
    },
    state(),
    policy,
  )
  assert.equal(
    action.kind === 'retry' && action.note,
    'Upload of a.txt: UND_ERR_SOCKET (other side closed); retry 1 of 3 in 0.4 s',
  )
})

test('retryable once the retries are spent: the upload stops with one error, its cause kept', () => {
  const cause = new Error('the first cause')
  const action = decide({ kind: 'retryable', failure: { ...failure, cause } }, state({ retries: 3 }), policy)
  assert.equal(action.kind, 'stop')
  assert.ok(action.error instanceof PartUploadError)
  assert.equal(
    action.error.message,
    'Upload of a.txt: the store answered 500 InternalError (gave up after 4 attempts)',
  )
  assert.equal(action.error.status, 500)
  assert.equal(action.error.retryable, true)
  assert.equal(action.error.cause, cause)
  // With no retries allowed at all, the answer alone.
  const first = decide({ kind: 'retryable', failure }, state(), retryPolicy({ retries: 0 }))
  assert.equal(
    first.kind === 'stop' && first.error.message,
    'Upload of a.txt: the store answered 500 InternalError',
  )
})

test('retryable past maxElapsedMs: the upload stops, saying when retries stop', () => {
  // 59 s after the first attempt, the third retry's 1.5 s wait would end past 60 s; a second's would not.
  const before = decide({ kind: 'retryable', failure }, state({ retries: 0, now: 60_000 }), policy)
  assert.equal(before.kind, 'retry')
  const action = decide({ kind: 'retryable', failure }, state({ retries: 2, now: 60_000 }), policy)
  assert.equal(action.kind, 'stop')
  assert.equal(
    action.error.message,
    'Upload of a.txt: the store answered 500 InternalError (gave up after 3 attempts in 59 s: retries stop 60 s after the first attempt)',
  )
})

test('fatal: the upload stops with the error as it is', () => {
  const error = new Error('a.txt changed while it was uploaded (size 5 -> 6); the upload was not completed')
  assert.deepEqual(decide({ kind: 'fatal', error }, state(), policy), { kind: 'stop', error })
  const refused = new PartUploadError('Upload of a.txt: the store answered 403 AccessDenied', 403, false)
  const action = decide({ kind: 'fatal', error: refused }, state(), policy)
  assert.equal(action.kind === 'stop' && action.error, refused)
})
