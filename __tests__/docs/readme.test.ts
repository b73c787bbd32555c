// Every workflow in the README that a user copies names real things: each `steps.<id>.outputs.<name>`
// it uses is an output of the action that step runs (action.yml, or <folder>/action.yml), and every
// input it gives that action exists.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFile, readdir } from 'node:fs/promises'
import path from 'node:path'
import { test } from 'node:test'
import { parse } from 'yaml'
import { root } from '../support/actions.ts'

interface Step {
  id?: string
  uses?: string
  with?: Record<string, unknown>
}

async function actionYml(uses: string): Promise<{ inputs: string[]; outputs: string[] } | undefined> {
  const match = /^studio\/gamehost(?:\/([a-z-]+))?@/.exec(uses)
  if (!match) return undefined
  const text = await readFile(path.join(root, match[1] ?? '', 'action.yml'), 'utf8')
  const yml = parse(text) as { inputs?: object; outputs?: object }
  return { inputs: Object.keys(yml.inputs ?? {}), outputs: Object.keys(yml.outputs ?? {}) }
}

test("the README's and docs/' workflows use only outputs and inputs the actions have", async () => {
  const docs = (await readdir(path.join(root, 'docs')))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`)
  const texts = await Promise.all(['README.md', ...docs].map((f) => readFile(path.join(root, f), 'utf8')))
  const blocks = texts.flatMap((text) => [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!))
  let references = 0
  let workflows = 0
  for (const block of blocks) {
    const doc = parse(block) as
      { jobs?: Record<string, { steps?: Step[]; environment?: unknown }> } | Step[] | null
    const fragment = !(doc && !Array.isArray(doc) && doc.jobs)
    const jobs = Array.isArray(doc)
      ? { steps: { steps: doc } }
      : (doc?.jobs ?? (doc && 'steps' in doc ? { job: doc } : {}))
    for (const job of Object.values(jobs as Record<string, { steps?: Step[] }>)) {
      const steps = job.steps ?? []
      workflows++
      const byId = new Map<string, Step>()
      for (const step of steps) if (step.id) byId.set(step.id, step)
      for (const step of steps) {
        const action = step.uses ? await actionYml(step.uses) : undefined
        if (!action) continue
        for (const input of Object.keys(step.with ?? {})) {
          assert.ok(action.inputs.includes(input), `${step.uses} has no input '${input}'`)
        }
      }
      const text = JSON.stringify(job)
      for (const [, id, output] of text.matchAll(/steps\.([a-z0-9_-]+)\.outputs\.([a-z0-9_-]+)/gi)) {
        const step = byId.get(id!)
        // A fragment (no jobs:) may name a step it only describes in a comment.
        if (!step && !fragment) assert.fail(`a workflow uses steps.${id}, which no step of its job is`)
        if (!step) continue
        const action = step.uses ? await actionYml(step.uses) : undefined
        if (!action) continue // a run: step's own outputs
        assert.ok(action.outputs.includes(output!), `${step.uses} (step ${id}) has no output '${output}'`)
        references++
      }
    }
  }
  assert.ok(workflows >= 3, 'the README shows workflows')
  assert.ok(references >= 3, "the README's workflows read the actions' outputs")
})

test('the env files docs/development.md has you fill with a token are ignored by git', async () => {
  const development = await readFile(path.join(root, 'docs/development.md'), 'utf8')
  const envFiles = [...new Set([...development.matchAll(/(?<![\w/])(\.env\.[a-z]+)\b/g)].map((m) => m[1]!))]
  assert.ok(envFiles.includes('.env.deploy'), envFiles.join(', '))
  for (const file of envFiles) {
    // Exit 0: ignored; 1 (an exception here): not ignored.
    execFileSync('git', ['check-ignore', '--quiet', '--no-index', file], { cwd: root })
  }
})
