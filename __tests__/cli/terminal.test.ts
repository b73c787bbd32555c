// The CLI's logger and its text reports.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createProgress } from '../../src/deploy/upload/progress.ts'
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

/** Lines the GitHub runner would read as workflow commands (see __tests__/common/untrusted.test.ts). */
function commandsIn(output: string): string[] {
  return output.split(/\r\n|\r|\n/).filter((line) => /^\s*::[^:]*::/.test(line) || /##\[[^\]]*\]/.test(line))
}

const PWNED = 'a\n::error::pwned.txt'
const ANSI = 'b\x1b[2K\x1b[1A\x1b[31m.txt'

test('no message, title or group name from outside starts a line, a workflow command or an escape sequence', async () => {
  for (const interactive of [false, true]) {
    const out = stream(interactive)
    const logger = terminalLogger({ stream: out, interactive, color: false, verbose: true, frameMs: 60_000 })
    await logger.group(`Upload ${PWNED}`, () => {
      logger.info(`Retrying ${PWNED} (503 SlowDown); retry 1 of 8 in 0.2 s`)
      logger.info(`::add-mask::${ANSI}`)
      logger.warning(`Skipping ${ANSI}: it is a link to nothing`, { title: 'x\n::set-output name=a::b' })
      logger.debug('##[add-mask]secret')
      return Promise.resolve()
    })
    logger.error(`site_id is 'x\r::error::y'`)
    logger.close()
    const text = out.text()
    assert.deepEqual(commandsIn(text), [], text)
    // The only escape sequences are the status line's own (clear the line), on a terminal.
    const rest = text.replaceAll('\r\x1b[2K', '')
    assert.ok(!rest.includes('\x1b') && !rest.includes('\r'), JSON.stringify(text))
    // Each line as the screen keeps it: the text after the last clearing of the line.
    const lines = text.split('\n').map((line) => line.split('\r\x1b[2K').at(-1))
    assert.ok(lines.includes('  Retrying a\\n::error::pwned.txt (503 SlowDown); retry 1 of 8 in 0.2 s'), text)
    assert.ok(lines.includes('  \\x3a:add-mask::b\\x1b[2K\\x1b[1A\\x1b[31m.txt'), text)
  }
})

test('a report as text holds no line break or workflow command from its cells and texts', () => {
  const report = {
    title: `gamehost deploy ${PWNED}`,
    blocks: [
      keyValueTable([['Site', { code: `id\n::add-mask::x` }]]),
      heading(`::warning::${ANSI}`),
      table(['File', 'Size'], [[{ code: PWNED }, '1 B']]),
      text(`Failed: service says '\n::error::x ##[set-output name=a;]b'`),
    ],
  }
  const rendered = renderText(report)
  assert.deepEqual(commandsIn(rendered), [], rendered)
  // eslint-disable-next-line no-control-regex
  assert.doesNotMatch(rendered, /[\x00-\x09\x0b-\x1f\x7f]/)
  // The title, a row, a blank line, the heading, the table's 2 lines, the text, and the end.
  assert.equal(rendered.split('\n').length, 8, rendered)
  assert.ok(rendered.includes('  a\\n::error::pwned.txt  1 B'), rendered)
  // In the job summary's HTML: one line, escaped.
  assert.equal(cellHtml({ code: `<b>\n\n![x](http://e/)` }), '<code>&lt;b&gt;\\n\\n![x](http://e/)</code>')
})
