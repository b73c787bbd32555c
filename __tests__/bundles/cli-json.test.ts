// --json holds wherever it stands on the line: before the command, after it, and for a command that
// does not exist (its error, with the suggestion, is the JSON document). Through dist/cli/index.js.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runCli } from '../support/cli.ts'
import { siteFiles, tempDir, writeTree } from '../support/helpers.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'

test('an unknown command with --json: one JSON document with the error and its suggestion, exit 2', async () => {
  for (const args of [
    ['deplyo', '--json'],
    ['--json', 'deplyo'],
  ]) {
    const run = await runCli(args)
    assert.equal(run.code, 2, run.stderr)
    assert.deepEqual(JSON.parse(run.stdout), {
      error: { code: 'USAGE', message: 'Unknown command deplyo. Did you mean deploy?' },
    })
    assert.match(run.stderr, /Unknown command deplyo\. Did you mean deploy\?/)
  }
})

test('--json before the command is the same as after it', async () => {
  const site = await tempDir()
  await writeTree(site, siteFiles(2))
  const common = ['--api-url', 'http://127.0.0.1:9', '--game-id', GAME, '--path', site, '--dry-run']
  const before = await runCli(['--json', 'deploy', ...common])
  const after = await runCli(['deploy', ...common, '--json'])
  assert.equal(before.code, after.code, before.stderr)
  const [first, second] = [before, after].map((run) => JSON.parse(run.stdout) as Record<string, unknown>)
  assert.ok(Number(first!['file-count']) > 0, before.stdout)
  assert.deepEqual(first, second)
})

test('no command with --json: the usage error as JSON, exit 2', async () => {
  const run = await runCli(['--json'])
  assert.equal(run.code, 2)
  const document = JSON.parse(run.stdout) as { error: { code: string; message: string } }
  assert.equal(document.error.code, 'USAGE')
  assert.match(document.error.message, /no command/i)
})
