import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { memoryLogger } from '../../../src/common/logger.ts'
import { checkOlder, type CommitStatus } from '../../../src/deploy/target/older.ts'
import type { SiteRecord } from '../../../src/deploy/collect/record.ts'

const LIVE = 'b'.repeat(40)
const THIS = 'a'.repeat(40)
const served = (commit?: string): { record: SiteRecord } => ({
  record: { format: 1, commit, digest: 'sha256:x', fileCount: 0, totalBytes: 0, files: [] },
})
const answering = (status: CommitStatus | undefined) => {
  const calls: Array<[string, string]> = []
  const compare = (base: string, head: string) => {
    calls.push([base, head])
    return Promise.resolve(status)
  }
  return { compare, calls }
}
const check = (options: Partial<Parameters<typeof checkOlder>[0]>) =>
  checkOlder({
    commit: THIS,
    live: served(LIVE),
    nameId: 'prod',
    allowOlder: false,
    compareCommits: undefined,
    logger: memoryLogger(),
    ...options,
  })

describe('never an older build over a newer one', () => {
  test('a commit behind the live one is not published, and the reason names both', async () => {
    const github = answering('behind')
    const logger = memoryLogger()
    const result = await check({ compareCommits: github.compare, logger })
    assert.equal(result.blocked, true)
    assert.deepEqual(github.calls, [[LIVE, THIS]], 'base: the live commit, head: this run')
    assert.match(result.reason, /serves commit bbbbbbb, newer than this run's aaaaaaa: nothing was published/)
    assert.match(logger.lines.join('\n'), /^warning: Older commit: Namespace prod serves commit bbbbbbb/m)
  })

  test('allow-older publishes it; ahead, identical, diverged and unknown publish', async () => {
    assert.equal(
      (await check({ compareCommits: answering('behind').compare, allowOlder: true })).blocked,
      false,
    )
    for (const status of ['ahead', 'identical', 'diverged', undefined] as const) {
      const result = await check({ compareCommits: answering(status).compare })
      assert.equal(result.blocked, false, String(status))
    }
  })

  test('without GitHub, with no record, or without commits, it says it could not compare, and publishes', async () => {
    const logger = memoryLogger()
    const alone = await check({ logger })
    assert.equal(alone.blocked, false)
    assert.match(alone.reason, /could not be checked \(no GitHub token or repository\): it is published/)
    assert.match(logger.lines.join('\n'), /^warning: /m)
    assert.equal((await check({ live: { absent: 'it answered 404' } })).blocked, false)
    assert.equal(
      (await check({ live: served(undefined), compareCommits: answering('behind').compare })).blocked,
      false,
    )
    assert.equal(
      (await check({ commit: undefined, compareCommits: answering('behind').compare })).blocked,
      false,
    )
    const same = await check({ commit: LIVE, compareCommits: answering('behind').compare })
    assert.deepEqual([same.blocked, same.status], [false, 'identical'])
  })

  test("GitHub's failure is said, and the build published", async () => {
    const result = await check({ compareCommits: () => Promise.reject(new Error('500 boom')) })
    assert.equal(result.blocked, false)
    assert.match(result.reason, /could not compare it with aaaaaaa \(500 boom\): it is published/)
  })
})
