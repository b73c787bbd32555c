// Every bad input of the servers, lobby-logs, avatars, validate, publish and sweep actions fails the step through the
// bundle with one ::error:: naming the input, before any call to the service.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { GAME, NAMESPACE, TOKEN, commands, runNewAction, type ActionName } from '../support/actions.ts'

type Case = [input: string, values: Record<string, string>, hint: RegExp]

const common: Case[] = [
  ['api-url', { 'api-url': '' }, /is required/],
  ['api-url', { 'api-url': 'ftp://example.com' }, /http:\/\/ or https:\/\//],
  ['token', { token: '' }, /secrets\.GAMEHOST_TOKEN/],
  ['game-id', { 'game-id': '' }, /is required/],
]

const lobby = { 'namespace-id': NAMESPACE, 'lobby-id': '00000000-0000-4000-8000-000000000000' }
const matchmaker = { 'namespace-id': NAMESPACE, 'lobby-count-max': '8', 'max-players': '8' }

const cases: Record<ActionName, { good: Record<string, string>; bad: Case[] }> = {
  servers: {
    good: { 'environment-id': '0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15' },
    bad: [
      ['environment-id', { 'environment-id': '' }, /is required/],
      ['tags', { tags: 'region=eu' }, /is not JSON: give a JSON object of string to string/],
      ['tags', { tags: '["eu"]' }, /expected a JSON object of string to string/],
      ['tags', { tags: '{"players": 4}' }, /the value of tag "players" is not a string/],
      ['tags', { tags: '{"region": ""}' }, /tag values must be 1 to 1024 bytes/],
      [
        'tags',
        { tags: JSON.stringify(Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, 'v']))) },
        /at most 8 tags/,
      ],
      ['include-destroyed', { 'include-destroyed': 'yes' }, /must be true or false/],
      ['limit', { limit: '0' }, /from 1 to 1000000/],
      ['limit', { limit: 'all' }, /from 1 to 1000000/],
    ],
  },
  'lobby-logs': {
    good: lobby,
    bad: [
      ['namespace-id', { 'namespace-id': '' }, /is required/],
      ['lobby-id', { 'lobby-id': '' }, /is required/],
      ['lobby-id', { 'lobby-id': 'lobby-1' }, /is not an id of the service: ids are UUIDs/],
      ['fail-if-failed', { 'fail-if-failed': 'maybe' }, /must be true or false/],
    ],
  },
  avatars: { good: {}, bad: [] },
  validate: {
    good: matchmaker,
    bad: [
      [
        'group-display-name',
        { 'namespace-id': '', 'lobby-count-max': '', 'max-players': '' },
        /nothing to validate/,
      ],
      ['lobby-count-max', { 'max-players': '' }, /go together/],
      ['lobby-count-max', { 'namespace-id': '' }, /need namespace-id/],
      [
        'namespace-id',
        { 'lobby-count-max': '', 'max-players': '', 'group-display-name': 'G' },
        /only used with/,
      ],
      ['lobby-count-max', { 'lobby-count-max': '-1' }, /from 0 to 2147483647/],
      ['max-players', { 'max-players': '2147483648' }, /from 0 to 2147483647/],
      ['max-players', { 'max-players': 'many' }, /from 0 to 2147483647/],
      ['fail-on-error', { 'fail-on-error': 'no' }, /must be true or false/],
    ],
  },
  publish: {
    good: { namespace: 'prod', 'version-id': 'previous' },
    bad: [
      ['namespace', { namespace: '' }, /namespace or namespace-id is required/],
      ['namespace', { 'namespace-id': NAMESPACE }, /both given/],
      ['namespace', { namespace: 'Prod!' }, /not a valid name id/],
      ['namespace-id', { namespace: '', 'namespace-id': 'prod' }, /ids are UUIDs/],
      ['version-id', { 'version-id': '' }, /version-id or from-namespace is required/],
      ['version-id', { 'from-namespace': 'staging' }, /both given/],
      ['version-id', { 'version-id': 'v1' }, /ids are UUIDs/],
      ['from-namespace', { 'version-id': '', 'from-namespace': '-staging' }, /not a valid name id/],
      ['cdn-domain', { 'cdn-domain': 'ftp://cdn.example.com' }, /neither a domain/],
    ],
  },
  sweep: {
    good: { 'github-token': 'github-token' },
    bad: [
      ['github-token', { 'github-token': '' }, /is required: the sweep asks GitHub/],
      ['namespace-prefix', { 'namespace-prefix': 'PR_' }, /cannot begin a namespace's name_id/],
      ['namespace-prefix', { 'namespace-prefix': 'pr--' }, /cannot begin a namespace's name_id/],
      ['dry-run', { 'dry-run': 'maybe' }, /must be true or false/],
    ],
  },
}

describe('bad inputs of the new actions, through their bundles', { concurrency: 4 }, () => {
  let emulator: Emulator
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false })
  })
  after(() => emulator.close())

  for (const [name, { good, bad }] of Object.entries(cases) as Array<
    [ActionName, (typeof cases)[ActionName]]
  >) {
    for (const [input, values, hint] of [...common, ...bad]) {
      test(`${name}: ${input} ${JSON.stringify(values)}`, async () => {
        const requests = emulator.requests.length
        const run = await runNewAction(name, {
          'api-url': emulator.url,
          token: TOKEN,
          'game-id': GAME,
          ...good,
          ...values,
        })
        assert.equal(run.exitCode, 1, run.stdout)
        const errors = commands(run, 'error')
        assert.equal(errors.length, 1, run.stdout)
        assert.ok(errors[0]!.startsWith(`::error::${input}`), errors[0])
        assert.match(errors[0]!, hint)
        assert.equal(emulator.requests.length, requests, 'no call reached the service')
        // The job summary gives the account of this run too: what failed, and to fix the input.
        assert.match(run.summary, new RegExp(`^<h2>gamehost ${name} failed</h2>`))
        assert.ok(run.summary.includes('fix the input the error names first'), run.summary)
      })
    }
  }
})
