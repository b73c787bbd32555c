// Issue 44: a build that holds an empty file (.nojekyll, .gitkeep, an empty .txt) failed every deploy,
// its zero-length read taken for a file that shrank.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { deploy } from '../../src/deploy/pipeline.ts'
import { fetchLocally, type Emulator } from '../../src/emulator/index.ts'
import { readInputs } from '../../src/inputs/deploy.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { getter, tempDir, writeTree } from '../support/helpers.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
let emulator: Emulator
before(async () => (emulator = await startTestEmulator()))
after(() => emulator.close())

test('a build with empty files deploys, and each is served empty', async () => {
  const site = await tempDir()
  await writeTree(site, {
    'index.html': '<!doctype html><title>game</title>',
    'empty.txt': '',
    '.nojekyll': '',
    'assets/.gitkeep': '',
  })
  const inputs = readInputs(
    getter({
      'api-url': emulator.url,
      token: 'gamehost-demo-token',
      'game-id': GAME,
      path: site,
      namespace: 'empty-files',
      'include-hidden': 'true',
    }),
    { repository: 'studio/space-game', ref: 'refs/heads/main', sha: 'abcdef0123456789' },
  )
  const result = await deploy(inputs, {
    logger: memoryLogger(),
    tempDir: await tempDir(),
    retry: { sleep: async () => {} },
  })
  assert.equal(result.uploadCompleted, true)
  assert.equal(result.manifest?.fileCount, 4)
  for (const path of ['empty.txt', '.nojekyll', 'assets/.gitkeep']) {
    assert.equal((await emulator.readUploadedFile(result.siteId!, path)).length, 0, path)
    const served = await fetchLocally(`${result.published!.url}${path}`)
    assert.equal(served.status, 200, path)
    assert.equal(served.text, '', path)
  }
})
