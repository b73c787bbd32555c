// scripts/ci/readme-yaml.ts: the README's YAML examples, extracted, parsed, held to the input table, and
// written out as whole workflows for actionlint.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { parse } from 'yaml'
import { readmes, root } from '../../scripts/release/files.ts'
import {
  actionOf,
  asWorkflow,
  checkExamples,
  inputProblems,
  yamlBlocks,
} from '../../scripts/ci/readme-yaml.ts'
import { tempDir } from '../support/helpers.ts'

const MARKDOWN = [
  '# Title', //                              1
  '',
  '```yaml', //                              3
  '- uses: studio/gamehost@v0',
  '  with: {api-url: x}',
  '```',
  '',
  '```sh',
  'echo not yaml',
  '```',
  '```yml', //                              11
  'a: 1',
  '```',
].join('\n')

test('the ```yaml and ```yml blocks, each with the line of its first YAML line', () => {
  assert.deepEqual(yamlBlocks(MARKDOWN), [
    { line: 4, text: '- uses: studio/gamehost@v0\n  with: {api-url: x}' },
    { line: 12, text: 'a: 1' },
  ])
  assert.deepEqual(yamlBlocks(MARKDOWN.replace(/\n/g, '\r\n')).length, 2)
})

test('an example becomes a whole workflow: steps, a step and a job wrapped, a workflow given an on:', () => {
  const step = { uses: 'studio/gamehost@v0', with: { 'api-url': 'x' } }
  const wrapped = (steps: unknown[], job: object = {}) => ({
    on: 'workflow_dispatch',
    jobs: { example: { 'runs-on': 'ubuntu-latest', ...job, steps } },
  })
  assert.deepEqual(asWorkflow([step, { run: 'echo' }]), wrapped([step, { run: 'echo' }]))
  assert.deepEqual(asWorkflow(step), wrapped([step]))
  assert.deepEqual(
    asWorkflow({ permissions: { contents: 'read' }, steps: [step] }),
    wrapped([step], { permissions: { contents: 'read' } }),
  )
  const workflow = { jobs: { a: { 'runs-on': 'x', steps: [step] } } }
  assert.deepEqual(asWorkflow(workflow), { on: 'workflow_dispatch', ...workflow })
  assert.deepEqual(asWorkflow({ on: 'push', ...workflow }), { on: 'push', ...workflow })
  // A GitLab job, a `headers:` value: no GitHub workflow.
  assert.equal(asWorkflow({ deploy: { image: 'node:24', script: ['npm ci'] } }), undefined)
  assert.equal(asWorkflow({ headers: '"**": {A: b}' }), undefined)
  assert.equal(asWorkflow(null), undefined)
})

test('a fragment reading the outputs of a step it only describes gets a stand-in step of that id', () => {
  const step = {
    uses: 'x/y@v1',
    with: { a: '${{ steps.deploy.outputs.url }}', b: '${{ steps.own.outputs.c }}' },
  }
  const workflow = asWorkflow([{ id: 'own', run: 'true' }, step])
  assert.deepEqual((workflow?.jobs as { example: { steps: unknown[] } }).example.steps, [
    { id: 'deploy', run: 'echo "the step the example names deploy"' },
    { id: 'own', run: 'true' },
    step,
  ])
})

test("a step of this repository's actions names an action it has and only that action's inputs", () => {
  assert.deepEqual(actionOf('studio/gamehost@v0'), { folder: '', action: 'deploy' })
  assert.deepEqual(actionOf('studio/gamehost/lobby-logs@v0'), { folder: 'lobby-logs', action: 'lobby-logs' })
  assert.deepEqual(actionOf('studio/gamehost/deploy@v0'), { folder: 'deploy' })
  assert.equal(actionOf('actions/checkout@v5'), undefined)
  const workflow = {
    jobs: {
      a: {
        steps: [
          { uses: 'actions/checkout@v5', with: { 'fetch-depth': 0 } },
          { uses: 'studio/gamehost@v0', with: { 'api-url': 'x', path: 'build', 'lobby-id': 'l' } },
          { uses: 'studio/gamehost/publish@v0', with: { 'from-namespace': 's', path: 'build' } },
          { uses: 'studio/gamehost/deploy@v0' },
          { uses: 'studio/gamehost/servers@v0', with: { 'environment-id': 'e', tags: 'a=b' } },
        ],
      },
    },
  }
  assert.deepEqual(inputProblems(workflow), [
    "job a, step 2 (studio/gamehost@v0): the action has no input 'lobby-id'",
    "job a, step 3 (studio/gamehost/publish@v0): the action has no input 'path'",
    "job a, step 4 (studio/gamehost/deploy@v0): this repository has no action in 'deploy' (the deploy is " +
      'studio/gamehost, the others studio/gamehost/publish, studio/gamehost/servers, studio/gamehost/lobby-logs, ' +
      'studio/gamehost/avatars, studio/gamehost/validate, studio/gamehost/sweep)',
  ])
})

test('an example that does not parse is named by its file and line', () => {
  const [check] = checkExamples('x.md', 'text\n```yaml\n- uses: a\n  with: [\n```\n')
  assert.equal(check?.line, 3)
  assert.match(check?.problems[0] ?? '', /^does not parse: /)
})

test("every YAML example of this repository's READMEs and docs parses and names only inputs that exist", async () => {
  const checks = Object.entries(await readmes()).flatMap(([file, text]) => checkExamples(file, text))
  assert.deepEqual(
    checks.flatMap((c) => c.problems.map((p) => `${c.file}:${c.line}: ${p}`)),
    [],
  )
  assert.ok(checks.filter((c) => c.workflow).length >= 10, 'the READMEs show workflows')
})

test('readme-yaml.ts --out writes each workflow example as a whole workflow file', async () => {
  const out = await tempDir()
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [path.join(root, 'scripts/ci/readme-yaml.ts'), '--out', out],
    { cwd: root },
  )
  const files = (await readdir(out)).sort()
  assert.match(stdout, new RegExp(`, ${files.length} of them GitHub workflows, written to `))
  assert.ok(files.length >= 10, files.join())
  for (const file of files) {
    const workflow = parse(await readFile(path.join(out, file), 'utf8')) as { on?: unknown; jobs?: object }
    assert.ok(workflow.on && workflow.jobs, `${file} is a whole workflow`)
  }
})
