// node scripts/ci/readme-yaml.ts [--out <dir>]
// Every YAML example of the READMEs and docs/ a user copies: each parses; each step that uses one of
// this repository's actions names that action and only inputs it has (src/inputs/table.ts); the
// install lines name what the release makes. With --out, writes each GitHub workflow example as a
// whole workflow file (a list of steps, a step or a job wrapped in one), for actionlint. CI runs it.
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { parseDocument, stringify } from 'yaml'
import { ACTIONS, inputsOf, type ActionName } from '../../src/inputs/table.ts'
import { installLineProblems } from '../release/release.ts'
import { packageVersion, readmes } from '../release/files.ts'

export interface YamlBlock {
  /** The file's line of the block's first YAML line (1-based). */
  line: number
  text: string
}

/** The ```yaml (or ```yml) fenced blocks of a Markdown text. */
export function yamlBlocks(markdown: string): YamlBlock[] {
  const blocks: YamlBlock[] = []
  const lines = markdown.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*```ya?ml\s*$/.test(lines[i]!)) continue
    const start = i + 1
    let end = start
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end]!)) end++
    blocks.push({ line: start + 1, text: lines.slice(start, end).join('\n') })
    i = end
  }
  return blocks
}

type Mapping = Record<string, unknown>
const isMapping = (value: unknown): value is Mapping =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const isStep = (value: unknown) => isMapping(value) && ('uses' in value || 'run' in value)

/**
 * The example as a whole GitHub workflow: a workflow as it is (with an `on:` if it shows none), a job
 * (it has steps), a list of steps or one step wrapped in one; undefined for YAML that is no GitHub
 * workflow (a GitLab job). A fragment may read the outputs of a step it only describes
 * (`steps.deploy.outputs.url`): a `run:` step with that id stands for it.
 */
export function asWorkflow(example: unknown): Mapping | undefined {
  const wrap = (job: Mapping): Mapping => ({
    on: 'workflow_dispatch',
    jobs: {
      example: { 'runs-on': 'ubuntu-latest', ...job, steps: withDescribedSteps(job.steps as unknown[]) },
    },
  })
  if (isMapping(example) && isMapping(example.jobs)) return { on: 'workflow_dispatch', ...example }
  if (isMapping(example) && Array.isArray(example.steps)) return wrap(example)
  if (Array.isArray(example) && example.length > 0 && example.every(isStep)) return wrap({ steps: example })
  if (isStep(example)) return wrap({ steps: [example] })
  return undefined
}

/** The steps, after a stand-in for each step id they read (`steps.<id>.`) but none of them has. */
function withDescribedSteps(steps: unknown[]): unknown[] {
  const ids = new Set(steps.map((step) => (isMapping(step) ? step.id : undefined)))
  const read = new Set([...JSON.stringify(steps).matchAll(/steps\.([A-Za-z0-9_-]+)\./g)].map((m) => m[1]!))
  const described = [...read].filter((id) => !ids.has(id))
  return [...described.map((id) => ({ id, run: `echo "the step the example names ${id}"` })), ...steps]
}

/** The folders of the actions but the deploy, which is the repository's root. */
const FOLDERS: readonly string[] = ACTIONS.filter((action) => action !== 'deploy')

/**
 * What a step's `uses:` names of this repository: the folder (`''` for the root) and the action there
 * (`studio/gamehost@v0` is the deploy, `studio/gamehost/publish@v0` the publish, a folder with no
 * action none); undefined for another repository's action.
 */
export function actionOf(uses: string): { folder: string; action?: ActionName } | undefined {
  const match = /^studio\/gamehost(?:\/([^@]+))?@/.exec(uses)
  if (!match) return undefined
  const folder = match[1] ?? ''
  if (folder === '') return { folder, action: 'deploy' }
  return FOLDERS.includes(folder) ? { folder, action: folder as ActionName } : { folder }
}

/** Each step of the workflow that uses one of our actions with an action or an input that does not exist. */
export function inputProblems(workflow: Mapping): string[] {
  const problems: string[] = []
  for (const [jobId, job] of Object.entries(isMapping(workflow.jobs) ? workflow.jobs : {})) {
    const steps = isMapping(job) && Array.isArray(job.steps) ? job.steps : []
    for (const [index, step] of steps.entries()) {
      if (!isMapping(step) || typeof step.uses !== 'string') continue
      const named = actionOf(step.uses)
      if (!named) continue
      const where = `job ${jobId}, step ${index + 1} (${step.uses})`
      if (!named.action) {
        problems.push(
          `${where}: this repository has no action in '${named.folder}' (the deploy is studio/gamehost, the others ${FOLDERS.map((f) => `studio/gamehost/${f}`).join(', ')})`,
        )
        continue
      }
      const names = inputsOf(named.action).map((row) => row.name)
      for (const input of Object.keys(isMapping(step.with) ? step.with : {})) {
        if (!names.includes(input)) problems.push(`${where}: the action has no input '${input}'`)
      }
    }
  }
  return problems
}

export interface ExampleCheck {
  file: string
  line: number
  /** The example as a whole workflow; undefined when it is no GitHub workflow. */
  workflow?: Mapping
  problems: string[]
}

/** Parses and checks every YAML example of a Markdown file. */
export function checkExamples(file: string, markdown: string): ExampleCheck[] {
  return yamlBlocks(markdown).map(({ line, text }) => {
    const doc = parseDocument(text)
    if (doc.errors.length > 0) {
      return {
        file,
        line,
        problems: doc.errors.map((error) => `does not parse: ${error.message.split('\n')[0]}`),
      }
    }
    const workflow = asWorkflow(doc.toJS())
    return { file, line, workflow, problems: workflow ? inputProblems(workflow) : [] }
  })
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: 'string' } } })
  const docs = await readmes()
  const checks = Object.entries(docs).flatMap(([file, text]) => checkExamples(file, text))
  const problems = [
    ...checks.flatMap((c) => c.problems.map((p) => `${c.file}:${c.line}: ${p}`)),
    ...installLineProblems(await packageVersion(), docs),
  ]
  const workflows = checks.filter((c) => c.workflow)
  if (values.out) {
    await rm(values.out, { recursive: true, force: true })
    await mkdir(values.out, { recursive: true })
    for (const check of workflows) {
      const name = `${check.file.replace(/[/.]/g, '-')}-${check.line}.yml`
      const header = `# ${check.file}, line ${check.line}, as a workflow (scripts/ci/readme-yaml.ts)\n`
      await writeFile(path.join(values.out, name), header + stringify(check.workflow))
    }
  }
  console.log(
    `${checks.length} YAML examples in ${Object.keys(docs).length} files, ${workflows.length} of them GitHub workflows` +
      (values.out ? `, written to ${values.out}` : ''),
  )
  if (problems.length > 0) {
    for (const problem of problems) console.error(problem)
    process.exit(1)
  }
}

if (import.meta.main) await main()
