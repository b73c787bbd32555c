// Each writer of the actions' face redacts on its own, whatever reaches it without visible(): a write to
// stdout, an output, the job summary's buffer, the failure. (A request to GitHub:
// __tests__/operations/github.test.ts.)
import assert from 'node:assert/strict'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import * as core from '@actions/core'
import { runAction, setOutputs, writeReport } from '../../src/actions/action.ts'
import { text } from '../../src/common/report.ts'

const TOKEN = 'svc-T0ken/with+sym:bols'

test("the action's stdout, outputs, summary and failure redact what reaches them raw", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gamehost-secrets-'))
  const files = { output: path.join(dir, 'output'), summary: path.join(dir, 'summary') }
  await writeFile(files.output, '')
  await writeFile(files.summary, '')
  const env = { ...process.env }
  Object.assign(process.env, {
    INPUT_TOKEN: TOKEN,
    GITHUB_OUTPUT: files.output,
    GITHUB_STEP_SUMMARY: files.summary,
  })
  const chunks: string[] = []
  const write = process.stdout.write.bind(process.stdout)
  process.stdout.write = (chunk: string | Uint8Array): boolean => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString())
    return true
  }
  const exitCode = process.exitCode
  try {
    await runAction(['token'], async () => {
      process.stdout.write(`raw ${TOKEN}\n`)
      setOutputs({ echo: `x ${TOKEN}` })
      core.summary.addRaw(`<p>raw ${TOKEN}</p>`, true)
      await writeReport({ title: 'echo', blocks: [text(`said ${TOKEN}`)] })
      throw new Error(`refused for ${TOKEN}`)
    })
  } finally {
    process.stdout.write = write
    process.exitCode = exitCode
    process.env = env
  }
  const log = chunks.join('').replace(/^::add-mask::.*$/m, '')
  assert.ok(chunks.join('').startsWith(`::add-mask::${TOKEN}`), 'the runner masks it too')
  const outputs = await readFile(files.output, 'utf8')
  const summary = await readFile(files.summary, 'utf8')
  for (const [where, written] of Object.entries({ log, outputs, summary }))
    assert.ok(!written.includes(TOKEN), `${where}: ${written}`)
  assert.match(log, /raw \*\*\*/)
  assert.match(log, /::error::refused for \*\*\*/)
  assert.match(outputs, /x \*\*\*/)
  assert.match(summary, /<p>raw \*\*\*<\/p>/)
  assert.match(summary, /said \*\*\*/)
})
