// Cancellation through dist/index.js: real SIGINT / SIGTERM sent to the action's process while its
// upload hangs on PUTs the emulator stalls (they never finish by themselves).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { setTimeout as tick } from 'node:timers/promises'
import { CancelledError, cancelOnSignals } from '../../src/common/cancel.ts'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { siteFiles, tempDir, writeTree } from '../support/helpers.ts'
import { startGitHubStub, type GitHubStub } from '../support/github-api.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'

const REPO = 'studio/space-game'
const VERSION = '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53'

describe('a cancelled run', () => {
  let emulator: Emulator
  let github: GitHubStub
  let site: string
  let written: Map<string, Buffer>
  let defaults: Record<string, string>
  before(async () => {
    // Every PUT stalls: the run is mid-upload until it is cancelled.
    emulator = await startTestEmulator({ faults: { putStallCount: 1_000_000 }, rateLimit: false })
    github = await startGitHubStub({
      'gh-write': { user: { login: 'github-actions[bot]', type: 'Bot' }, canComment: true },
    })
    site = await tempDir()
    written = await writeTree(site, siteFiles(12))
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(async () => {
    await emulator.close()
    await github.close()
  })

  /** Runs the action and sends `signal` once `stalls` PUTs hang at the emulator. */
  const cancelled = async (signal: NodeJS.Signals, issue: number) => {
    // The preview's namespace exists (an earlier push made it): a deploy that publishes creates a new
    // namespace only once its version exists, after the upload.
    const made = await fetch(`${emulator.url}/cloud/games/${GAME}/namespaces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name_id: `cancel-${issue}`,
        display_name: `cancel-${issue}`,
        version_id: VERSION,
      }),
    })
    assert.equal(made.status, 200)
    let pid: number | undefined
    const stallsBefore = emulator.faults.putStalls
    const run = runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      githubToken: 'gh-write',
      event: {
        name: 'pull_request',
        payload: {
          number: issue,
          pull_request: {
            number: issue,
            head: { sha: 'aaaaaaa1111111', repo: { full_name: REPO } },
            base: { repo: { full_name: REPO } },
          },
        },
      },
      env: { GITHUB_API_URL: github.url, GITHUB_REF: `refs/pull/${issue}/merge` },
      inputs: {
        'api-url': emulator.url,
        token: TOKEN,
        'game-id': GAME,
        path: site,
        namespace: `cancel-${issue}`,
        'version-id': VERSION,
        concurrency: '4',
      },
      onSpawn: (id) => (pid = id),
    })
    let exited = false
    void run.finally(() => (exited = true))
    while (emulator.faults.putStalls < stallsBefore + 4 && !exited) await tick(5)
    assert.ok(!exited, 'the run was still uploading')
    process.kill(pid!, signal)
    return run
  }

  for (const [signal, issue] of [
    ['SIGINT', 31],
    ['SIGTERM', 32],
  ] as const) {
    test(`${signal} mid-upload: exits non-zero, never completes, sets namespace-id but no site-id, says what was done`, async () => {
      const result = await cancelled(signal, issue)
      assert.notEqual(result.exitCode, 0)
      assert.match(result.stdout, new RegExp(`^::error::The run was cancelled \\(${signal}\\)$`, 'm'))

      const namespace = emulator.namespaces(GAME).find((n) => n.nameId === `cancel-${issue}`)
      assert.ok(namespace, 'the namespace the run worked on')
      assert.equal(result.outputs['namespace-id'], namespace.namespaceId)
      // A site whose upload never completed serves nothing: no site-id output, the summary names it.
      assert.equal(result.outputs['site-id'], '')
      assert.equal(result.outputs['upload-id'], '')
      const siteId = /<code>([0-9a-f-]{36})<\/code> \(created; upload not completed\)/.exec(
        result.summary,
      )?.[1]
      assert.ok(siteId, result.summary)
      const created = emulator.site(siteId)
      assert.ok(created, `the summary's site ${siteId} is the site created`)
      // What the scan collected, though no file was hashed to the end.
      assert.equal(result.outputs['file-count'], String(written.size))
      assert.equal(
        result.outputs['total-bytes'],
        String([...written.values()].reduce((sum, bytes) => sum + bytes.length, 0)),
      )
      assert.equal(created.completed, false, 'a cancelled upload is never completed')
      assert.ok(
        !emulator.requests.some((r) => r.path === `/cloud/uploads/${created.uploadId}/complete`),
        'no complete call was made',
      )

      assert.match(result.summary, /<h2>gamehost deploy cancelled<\/h2>/)
      assert.match(
        result.summary,
        new RegExp(`The run was cancelled \\(${signal}\\): nothing new was started`),
      )
      assert.ok(
        result.summary.includes(`<code>${namespace.namespaceId}</code>`),
        'the summary names the namespace',
      )
      assert.match(result.summary, /created; upload not completed/)
      assert.match(result.summary, /a re-run creates a new site and uploads every file/)

      const comments = github.comments(REPO, issue)
      assert.equal(comments.length, 1)
      assert.match(
        comments[0]!.body,
        new RegExp(`🛑 The run was cancelled \\(${signal}\\) before the deploy finished`),
      )
      assert.ok(comments[0]!.body.includes(namespace.namespaceId), 'the comment remembers the namespace')
    })
  }

  test('its deadline (GAMEHOST_DEADLINE_SECONDS) mid-upload: fails saying it ran out of time, never completes, says what was done', async () => {
    const started = Date.now()
    const result = await runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      env: { GAMEHOST_DEADLINE_SECONDS: '2' },
      inputs: { 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, path: site, concurrency: '4' },
    })
    const took = Date.now() - started
    assert.equal(result.exitCode, 1, result.stdout)
    assert.match(
      result.stdout,
      /^::error::The deploy ran out of time: it did not finish within its deadline of 2 s$/m,
    )
    assert.ok(took < 12_000, `${took} ms for a deadline of 2 s`)
    const siteId = /<code>([0-9a-f-]{36})<\/code> \(created; upload not completed\)/.exec(result.summary)?.[1]
    assert.ok(siteId, result.summary)
    assert.equal(emulator.site(siteId)?.completed, false, 'an overdue upload is never completed')
    assert.equal(result.outputs['site-id'], '')
    assert.match(result.summary, /a re-run creates a new site and uploads every file/)
  })

  test('Ctrl-C in the CLI mid-upload: exit 130, the site not completed, a report of what was done', async () => {
    const stallsBefore = emulator.faults.putStalls
    const child = spawn(
      process.execPath,
      [
        path.join(root, 'dist/cli/index.js'),
        'deploy',
        '--api-url',
        emulator.url,
        '--game-id',
        GAME,
        '--path',
        site,
      ],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', GAMEHOST_TOKEN: TOKEN },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const closed = once(child, 'close') as Promise<[number | null]>
    while (emulator.faults.putStalls < stallsBefore + 2 && child.exitCode === null) await tick(5)
    child.kill('SIGINT')
    const [code] = await closed
    assert.equal(code, 130, stdout + stderr)
    assert.match(stderr, /Cancelling: nothing new starts/)
    assert.match(stderr, /The run was cancelled \(SIGINT\)/)
    assert.match(stdout, /gamehost deploy cancelled/)
    const siteId = /Site\s+.* ([0-9a-f-]{36}) \(created; upload not completed\)/.exec(stdout)?.[1]
    assert.ok(siteId, stdout)
    assert.equal(emulator.site(siteId)!.completed, false)
    assert.match(stdout, /a re-run creates a new site/)
  })
})

test('the first signal aborts with a CancelledError; each further one is passed on (the CLI quits at once)', async () => {
  const again: string[] = []
  const listeners = process.listenerCount('SIGWINCH')
  // A real signal to this process; SIGWINCH (harmless by default) rather than SIGINT, which the test runner handles itself.
  const cancellation = cancelOnSignals(['SIGWINCH'], (signal) => again.push(signal))
  try {
    const aborted = once(cancellation.signal, 'abort')
    process.kill(process.pid, 'SIGWINCH')
    await aborted
    assert.ok(cancellation.signal.reason instanceof CancelledError)
    assert.equal(cancellation.signal.reason.message, 'The run was cancelled (SIGWINCH)')
    assert.deepEqual(again, [])
    const received = once(process, 'SIGWINCH')
    process.kill(process.pid, 'SIGWINCH')
    await received
    assert.deepEqual(again, ['SIGWINCH'])
  } finally {
    cancellation.dispose()
  }
  assert.equal(process.listenerCount('SIGWINCH'), listeners, 'dispose stops listening')
})
