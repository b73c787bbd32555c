// The CLI's logger and its text reports.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createProgress } from '../../src/deploy/progress.ts'
import {
  cellHtml,
  formatEpochMs,
  heading,
  keyValueTable,
  renderText,
  table,
  text,
} from '../../src/common/report.ts'
import { terminalLogger } from '../../src/cli/terminal.ts'

function stream(isTTY: boolean) {
  const chunks: string[] = []
  return { chunks, isTTY, write: (chunk: string) => void chunks.push(chunk), text: () => chunks.join('') }
}

test('in a pipe or a CI log: plain lines, phases as headings, debug only when verbose', async () => {
  const out = stream(false)
  const logger = terminalLogger({ stream: out })
  await logger.group('Upload', () => {
    logger.info('Created site s')
    logger.debug('POST /cloud/games/g/cdn/sites')
    logger.warning('slow', { title: 'Network' })
    return Promise.resolve()
  })
  logger.error('it broke')
  logger.close()
  assert.equal(out.text(), '> Upload\n  Created site s\n  warning: Network: slow\nerror: it broke\n')

  const verbose = stream(false)
  const loud = terminalLogger({ stream: verbose, verbose: true })
  loud.debug('GET /x')
  assert.equal(verbose.text(), 'debug: GET /x\n')
})

test("on a terminal: the upload's progress lines update the status line, the last one is kept", async () => {
  const out = stream(true)
  let now = 0
  const logger = terminalLogger({ stream: out, color: false, now: () => now, frameMs: 60_000 })
  await logger.group('Upload', async () => {
    // The real progress lines, from progress.ts.
    const progress = createProgress({
      files: 2,
      bytes: 2048,
      logger,
      now: () => now,
      intervalMs: 60_000,
    })
    now = 1000
    progress.addBytes(1024)
    progress.partDone('a', 1)
    progress.addBytes(1024)
    progress.partDone('b', 1)
    progress.stop()
    return Promise.resolve()
  })
  logger.info('Deployed')
  // What the status line showed over time, and what stays on the screen (each line as a terminal
  // keeps it: the text after the last clearing of the line).
  const lines = out
    .text()
    .split('\n')
    .flatMap((line) => line.split('\r\x1b[2K'))
    .filter((l) => l.trim())
  const screen = out
    .text()
    .split('\n')
    .map((line) => line.split('\r\x1b[2K').at(-1))
    .join('\n')
  assert.equal(screen, '> Upload\n  Uploaded files 2/2, 2.0 KiB/2.0 KiB, 2.0 KiB/s, ETA 0 s\nDeployed\n')
  assert.ok(
    lines.some((l) => /^⠋ Upload 0\.0 s$/.test(l)),
    lines.join('|'),
  )
  assert.ok(
    lines.some((l) => /Upload 1\.0 s · files 2\/2, 2\.0 KiB\/2\.0 KiB/.test(l)),
    lines.join('|'),
  )
})

test('reports as text: aligned columns, key-value tables without a header', () => {
  const report = {
    title: 'gamehost thing',
    blocks: [
      keyValueTable([
        ['Site', ['name ', { code: 'id-1' }]],
        ['Files', '3'],
      ]),
      heading('Largest'),
      table(
        ['File', 'Size'],
        [
          [{ code: 'a.js' }, '1 KiB'],
          [{ code: 'index.html' }, '20 B'],
        ],
      ),
      text('and more'),
    ],
  }
  assert.equal(
    renderText(report),
    [
      'gamehost thing',
      '  Site   name id-1',
      '  Files  3',
      '',
      'Largest',
      '  File        Size',
      '  a.js        1 KiB',
      '  index.html  20 B',
      '  and more',
      '',
    ].join('\n'),
  )
  assert.equal(cellHtml(['<b> & ', { code: 'x"y' }]), '&lt;b&gt; &amp; <code>x&quot;y</code>')
  assert.equal(formatEpochMs(Date.parse('2025-05-02T09:14:03.250Z')), '2025-05-02T09:14:03Z')
  assert.equal(formatEpochMs(undefined), '')
})
