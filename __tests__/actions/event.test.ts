// An event file that is not JSON is named as the event file (the variable, its path) with what is wrong
// with it, not blamed on the pull request it would have named.
import assert from 'node:assert/strict'
import { mkdtemp, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { checkPullRequestRead, readEvent, readEventFile } from '../../src/actions/event.ts'

const brokenEventFile = async () => {
  const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'gamehost-event-')), 'event.json')
  await writeFile(file, '{"pull_request": {"number": 12,')
  return file
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

test('a pull request event whose event file is not JSON names the file and what is wrong with it', async () => {
  const file = await brokenEventFile()
  for (const name of ['pull_request', 'pull_request_target']) {
    const env = { GITHUB_EVENT_NAME: name, GITHUB_EVENT_PATH: file, GITHUB_REPOSITORY: 'studio/space-game' }
    const read = readEventFile(env)
    assert.equal(read.payload, undefined)
    assert.throws(
      () => checkPullRequestRead(readEvent(env, read.payload), env, read.problem),
      new RegExp(
        `^Error: This is a ${name} run, but its event file \\(GITHUB_EVENT_PATH: ${escaped(file)}\\) is not JSON ` +
          '\\(.*JSON.*\\), so nothing was deployed',
      ),
    )
  }
})

test('a workflow_run deploying a pull request whose event file is not JSON names the file, not the pull request', async () => {
  const file = await brokenEventFile()
  const env = {
    GITHUB_EVENT_NAME: 'workflow_run',
    GITHUB_EVENT_PATH: file,
    GITHUB_REPOSITORY: 'studio/space-game',
  }
  const read = readEventFile(env)
  assert.throws(
    () => checkPullRequestRead(readEvent(env, read.payload, 21), env, read.problem),
    new RegExp(
      `^Error: This is a workflow_run run deploying pull request #21, but its event file \\(GITHUB_EVENT_PATH: ` +
        `${escaped(file)}\\) is not JSON \\(.*\\): `,
    ),
  )
})

test('a push needs no event file: one that is not JSON is not in its way, a missing one is no problem', async () => {
  const file = await brokenEventFile()
  const env = { GITHUB_EVENT_NAME: 'push', GITHUB_EVENT_PATH: file }
  const read = readEventFile(env)
  checkPullRequestRead(readEvent(env, read.payload), env, read.problem)
  const missing = readEventFile({ GITHUB_EVENT_PATH: path.join(path.dirname(file), 'none.json') })
  assert.deepEqual(missing, { payload: undefined })
})
