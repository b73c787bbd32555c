// The sticky comment of a deployed preview carries the warnings the build drew: a Godot threads
// export that cannot start gets no bare tick.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { previewRecord } from '../../src/actions/preview-record.ts'
import type { DeployResult } from '../../src/deploy/pipeline.ts'
import { deployResult } from '../support/deploy-result.ts'

const SITE = '5c1f9e2a-8d3b-4a7c-b6e0-2f4d8a1c9e37'

const deployed = (warnings: string[]) =>
  deployResult({
    siteId: SITE,
    provisioned: { nameId: 'pr-12' },
    uploadCompleted: true,
    serving: { engine: 'auto', builds: [], contentTypes: [], routes: [], warnings, notes: [] },
  })

const context = { key: 'k', previous: undefined, namespaceNameId: 'pr-12', commit: undefined }

test('a deploy without warnings is a tick', () => {
  const { status } = previewRecord({ kind: 'deployed', result: deployed([]) }, context)
  assert.equal(status, `✅ Deployed site \`${SITE}\`.`)
})

test('a deploy that drew warnings says them in the comment, not a bare tick, each escaped', () => {
  const warning =
    'index.html is a Godot threads export: it needs cross-origin isolation, which this CDN cannot give <b>*now*</b>'
  const { status } = previewRecord(
    { kind: 'deployed', result: deployed([warning, 'no index.html']) },
    context,
  )
  const lines = status.split('\n')
  assert.equal(lines[0], `⚠️ Deployed site \`${SITE}\`.`)
  assert.ok(!status.includes('✅'), status)
  assert.ok(status.includes('2 warnings (fail-on-warning: true makes them fail the run):'), status)
  assert.ok(lines.includes('- no index\\.html'), status)
  const first = lines.find((line) => line.includes('Godot'))!
  assert.ok(first.startsWith('- index\\.html is a Godot threads export'), first)
  assert.ok(first.endsWith('\\<b\\>\\*now\\*\\<\\/b\\>'), `escaped as text: ${first}`)
})

test('the smoke test in the comment: the game started in the browser, or why not and what was put back', () => {
  const live = (smoke: DeployResult['smoke']): DeployResult => ({
    ...deployed([]),
    published: {
      versionId: 'v2',
      versionName: 'build 2',
      replacedVersionId: 'v1',
      created: true,
      url: 'https://demo-game--pr-12.example.com/',
      domain: undefined,
    },
    verification: {
      verified: true,
      url: 'https://demo-game--pr-12.example.com/',
      durationMs: 2600,
      attempts: 3,
      checked: [],
    },
    smoke,
  })
  const passed = previewRecord(
    {
      kind: 'deployed',
      result: live({
        status: 'passed',
        line: 'the game started in Chrome 131 in 2.4 s: 0 errors, 14 requests answered, the canvas drew',
      }),
    },
    context,
  )
  // Text from the page is escaped as Markdown text: read without the escapes.
  const read = (status: string) => status.replace(/\\(.)/g, '$1')
  assert.ok(
    read(passed.status).endsWith(
      '\n\n🎮 Smoke test: the game started in Chrome 131 in 2.4 s: 0 errors, 14 requests answered, the canvas drew.',
    ),
    passed.status,
  )
  const failed = previewRecord(
    {
      kind: 'deployed',
      result: live({
        status: 'failed',
        line: 'the game did not start in Chrome 131: 1 error; first: uncaught <TypeError>',
        remedy: 'fix the error it names',
        rolledBackTo: 'v1',
      }),
    },
    context,
  )
  assert.ok(
    read(failed.status).includes('⚠️ Smoke test: the game did not start in Chrome 131'),
    failed.status,
  )
  assert.ok(failed.status.includes('\\<TypeError\\>'), `escaped as text: ${failed.status}`)
  assert.ok(read(failed.status).includes('the namespace was put back on version v1'), failed.status)
  // A version put back is not what the preview serves.
  assert.equal(failed.state.versionId, undefined)
})
