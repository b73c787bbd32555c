// The actions' face on @actions/core: what reaches the runner's log and the job summary from text that
// came from outside (a file name of a fork's build, a service's answer, an error message).
import assert from 'node:assert/strict'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { actionsLogger, notice, runAction, writeReport } from '../../src/actions/action.ts'
import { ServiceError } from '../../src/api/errors.ts'
import { heading, keyValueTable, table, text } from '../../src/common/report.ts'

/** What the runner reads as a workflow command in a line (actions/runner ActionCommand.TryParseV2 / TryParse). */
function commandsIn(output: string): string[] {
  return output.split(/\r\n|\r|\n/).filter((line) => /^\s*::[^:]*::/.test(line) || /##\[[^\]]*\]/.test(line))
}

/** Runs `fn` with process.stdout captured: what the step would write to its log. */
async function captured(fn: () => Promise<void> | void): Promise<string> {
  const chunks: string[] = []
  const write = process.stdout.write.bind(process.stdout)
  const capture = (chunk: string | Uint8Array): boolean => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString())
    return true
  }
  process.stdout.write = capture
  const exitCode = process.exitCode
  try {
    await fn()
  } finally {
    process.stdout.write = write
    process.exitCode = exitCode
  }
  return chunks.join('')
}

const PWNED = 'a\n::error::pwned.txt'
const ANSI = 'b\x1b[2K\x1b[31m.txt'

test('no line of the log is a workflow command we did not write, whatever the text logged', async () => {
  const log = await captured(async () => {
    await actionsLogger.group(`Upload ${PWNED}`, () => {
      actionsLogger.info(`Retrying ${PWNED} (503 SlowDown); retry 1 of 8 in 0.2 s`)
      actionsLogger.info(`::add-mask::${ANSI}`)
      actionsLogger.info('site ##[set-output name=site-id;]x')
      actionsLogger.warning(`Skipping ${PWNED}: it is a link to nothing`, { title: 'x\n::add-mask::y' })
      actionsLogger.error('\r::stop-commands::tok')
      actionsLogger.debug(`GET /x\n::add-mask::z`)
      notice(`Live at https://x/\n::error::n`, { title: 'Deployed' })
      return Promise.resolve()
    })
  })
  const ours = /^::(group|endgroup|warning|error|debug|notice)( [^:]*)?::/
  const lines = log.split(/\r\n|\r|\n/).filter(Boolean)
  assert.deepEqual(
    lines.filter((line) => commandsIn(line).length && !ours.test(line)),
    [],
    log,
  )
  assert.equal(lines.length, 9, log)
  assert.ok(
    !/::add-mask::|::stop-commands::|::set-output/.test(lines.filter((l) => !ours.test(l)).join('\n')),
  )
  assert.ok(lines.includes('Retrying a\\n::error::pwned.txt (503 SlowDown); retry 1 of 8 in 0.2 s'), log)
  assert.ok(lines.includes('\\x3a:add-mask::b\\x1b[2K\\x1b[31m.txt'), log)
  assert.ok(lines.includes('site \\x23#[set-output name=site-id;]x'), log)
  assert.ok(lines.includes('::group::Upload a\\n::error::pwned.txt'), log)
  assert.ok(lines.includes('::error::\\r::stop-commands::tok'), log)
  assert.ok(!log.includes('\x1b'), 'no escape sequence reaches the log')
})

/**
 * The job summary's file, emptied: one for the whole file, as @actions/core keeps the first
 * GITHUB_STEP_SUMMARY it reads.
 */
let summaryPath: string | undefined
async function summaryFile(): Promise<string> {
  summaryPath ??= path.join(await mkdtemp(path.join(os.tmpdir(), 'gamehost-summary-')), 'summary.md')
  await writeFile(summaryPath, '')
  return summaryPath
}

test("the step's failure, its annotations and its summary show an outside message on one line", async () => {
  const file = await summaryFile()
  const previous = process.env.GITHUB_STEP_SUMMARY
  process.env.GITHUB_STEP_SUMMARY = file
  let log: string
  try {
    log = await captured(() =>
      runAction([], () => {
        throw new ServiceError({
          operation: 'games.cdn.createGameCdnSite',
          status: 500,
          body: { code: 'ERROR', message: `boom\n::add-mask::x \x1b[31m` },
        })
      }),
    )
  } finally {
    if (previous === undefined) delete process.env.GITHUB_STEP_SUMMARY
    else process.env.GITHUB_STEP_SUMMARY = previous
  }
  assert.equal(
    log.trim(),
    '::error::games.cdn.createGameCdnSite failed: 500 ERROR: boom\\n::add-mask::x \\x1b[31m',
    log,
  )
  // A failure the body wrote no summary for gets one: what failed, on one line.
  const summary = await readFile(file, 'utf8')
  assert.ok(summary.startsWith('<h2>gamehost action failed</h2>'), summary)
  assert.ok(summary.includes('<p>Failed: games.cdn.createGameCdnSite failed: 500 ERROR: boom\\n'), summary)
  assert.ok(!summary.includes('\x1b'), summary)
})

test('the job summary holds text from outside as text on one line: no Markdown, link or image of its own', async () => {
  const file = await summaryFile()
  const previous = process.env.GITHUB_STEP_SUMMARY
  process.env.GITHUB_STEP_SUMMARY = file
  try {
    const hostile = 'x\n\n![i](https://evil.example/p.png) [c](https://evil.example/) <img src=x>'
    await writeReport({
      title: `gamehost deploy ${hostile}`,
      blocks: [
        keyValueTable([['Site', { code: hostile }]]),
        heading(hostile),
        table([hostile], [[hostile]]),
        text(`Failed: ${hostile} https://evil.example/`),
      ],
    })
    const summary = await readFile(file, 'utf8')
    const lines = summary.split('\n').filter(Boolean)
    // Each block one line of HTML: an HTML block, where Markdown is not read, that no blank line ends.
    assert.equal(lines.length, 5, summary)
    for (const line of lines) assert.match(line, /^<(h2|h3|table|p)>.*<\/(h2|h3|table|p)>$/, line)
    assert.ok(!summary.includes('<img'), summary)
    assert.match(
      summary,
      /<p>Failed: x\\n\\n!\[i\]\(https:\/\/evil\.example\/p\.png\) .* &lt;img src=x&gt; https:\/\/evil\.example\/<\/p>/,
    )
  } finally {
    if (previous === undefined) delete process.env.GITHUB_STEP_SUMMARY
    else process.env.GITHUB_STEP_SUMMARY = previous
  }
})
