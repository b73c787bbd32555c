import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { sizeMarkdown } from '../../src/actions/preview-record.ts'
import type { SizeChange } from '../../src/deploy/sizes.ts'

describe("the comment's size table", () => {
  test('file names from the build are code: no link, mention, HTML or cell break', () => {
    const change: SizeChange = {
      base: 'prod',
      baseCommit: 'c'.repeat(40),
      totalBefore: 1000,
      totalAfter: 3000,
      rows: [
        { path: 'Build/game.wasm', before: 1000, after: 2000, engine: true },
        { path: 'x|<img src=x>@team`[a](b)\n.js', after: 1000, engine: false },
      ],
      more: { count: 2, delta: -5 },
      added: 1,
      removed: 0,
      changed: 2,
    }
    const markdown = sizeMarkdown(change)
    const lines = markdown.split('\n')
    assert.equal(
      lines[0],
      '**Size** compared with `prod` (`ccccccc`): Total 1000 B → 2\\.9 KiB\\: \\+2\\.0 KiB \\(\\+200\\.0\\%\\)\\; 2 files changed \\(1 new\\, 0 removed\\)',
    )
    assert.ok(
      lines.includes('| `Build/game.wasm` | 1000 B | 2\\.0 KiB | \\+1000 B \\(\\+100\\.0\\%\\) |'),
      markdown,
    )
    const hostile = lines.find((l) => l.includes('img'))!
    assert.equal(hostile, '| ``x\\|<img src=x>@team`[a](b)\\n.js`` | \\- | 1000 B | new \\(\\+1000 B\\) |')
    assert.equal(lines.at(-1), '| and 2 more files changed | | | \\-5 B in all |')
  })
})
