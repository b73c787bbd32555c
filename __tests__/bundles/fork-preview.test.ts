// The fork-preview recipe (docs/previews.md), run as GitHub runs it: its two workflows are read from it,
// the build runs on a fork's pull_request (its `run:` steps in bash, its artifact kept in a folder),
// and the deploy runs on the workflow_run event GitHub sends for it (pull_requests empty, as for every
// fork), through dist/index.js against the emulator and a stand-in of the GitHub API. Twice: the
// second push updates the same comment.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { cp, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { parse } from 'yaml'
import { type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { actionDefaults, parseFileCommands, runAction, type ActionRun } from '../../scripts/run-action.ts'
import { siteFiles, tempDir, writeTree } from '../support/helpers.ts'
import { startGitHubStub, type GitHubStub } from '../support/github-api.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const REPO = 'studio/space-game'
const FORK = 'someone/space-game'
const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const BOT = { login: 'github-actions[bot]', type: 'Bot' as const }
const sh = promisify(execFile)
/** A site with the same bytes on every build. */
const SITE = Object.fromEntries(
  Object.entries(siteFiles(8)).map(([name, content]) => [
    name,
    typeof content === 'number' ? 'x'.repeat(content) : content,
  ]),
)

interface Step {
  id?: string
  uses?: string
  run?: string
  with?: Record<string, string>
}
interface Workflow {
  name: string
  on: unknown
  permissions?: Record<string, string>
  jobs: Record<string, { if?: string; steps: Step[] }>
}

/** The YAML block of docs/previews.md that starts with `# .github/workflows/<file>`. */
async function readmeWorkflow(file: string): Promise<Workflow> {
  const readme = await readFile(path.join(root, 'docs/previews.md'), 'utf8')
  const block = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .find((text) => text.startsWith(`# .github/workflows/${file}\n`))
  assert.ok(block, `docs/previews.md shows .github/workflows/${file}`)
  return parse(block) as Workflow
}

/** `${{ a.b.c }}` looked up in the context; `a == 'x'` compared, as the few expressions here need. */
function evaluate(text: string, context: Record<string, unknown>): string {
  return text.replace(/\$\{\{\s*(.+?)\s*\}\}/g, (_, expression: string) => {
    const value = expression
      .split('.')
      .reduce<unknown>((at, key) => (at as Record<string, unknown>)?.[key], context)
    assert.notEqual(value, undefined, `${expression} is known`)
    return String(value)
  })
}
function condition(text: string, context: Record<string, unknown>): boolean {
  const [left, right] = text.split('==').map((s) => s.trim())
  return evaluate(`\${{ ${left} }}`, context) === right!.replace(/^'|'$/g, '')
}

/** Runs a `run:` step in bash, in the workspace, with GITHUB_OUTPUT; returns the step's outputs. */
async function runStep(script: string, workspace: string): Promise<Record<string, string>> {
  const output = path.join(workspace, '..', `output-${Math.random().toString(36).slice(2)}`)
  await writeFile(output, '')
  await sh('bash', ['-e', '-c', script], {
    cwd: workspace,
    env: { PATH: process.env.PATH, GITHUB_OUTPUT: output },
  })
  return parseFileCommands(await readFile(output, 'utf8'))
}

describe('the fork-preview workflows of docs/previews.md', () => {
  let emulator: Emulator
  let github: GitHubStub
  let build: Workflow
  let deploy: Workflow
  let defaults: Record<string, string>
  before(async () => {
    emulator = await startTestEmulator()
    github = await startGitHubStub({ 'gh-write': { user: BOT, canComment: true } })
    build = await readmeWorkflow('preview-build.yml')
    deploy = await readmeWorkflow('preview-deploy.yml')
    defaults = await actionDefaults(path.join(root, 'action.yml'))
  })
  after(async () => {
    await emulator.close()
    await github.close()
  })

  /** The build workflow on the fork's pull request: returns the artifacts it uploaded. */
  async function runBuild(
    number: number,
    files: Record<string, string | number>,
  ): Promise<Map<string, string>> {
    const workspace = await tempDir()
    const artifacts = new Map<string, string>()
    const context = { github: { event: { pull_request: { number } } } }
    for (const step of Object.values(build.jobs)[0]!.steps) {
      if (step.uses?.startsWith('actions/checkout@')) continue
      else if (step.run?.includes('npm run build')) {
        // The project's own build stands here: it writes the site to build/.
        await writeTree(path.join(workspace, 'build'), files)
      } else if (step.run) await runStep(evaluate(step.run, context), workspace)
      else if (step.uses?.startsWith('actions/upload-artifact@')) {
        const store = await tempDir()
        for (const entry of step.with!.path!.split('\n').filter(Boolean)) {
          await cp(path.join(workspace, entry.trim()), path.join(store, entry.trim()), { recursive: true })
        }
        artifacts.set(step.with!.name!, store)
      } else assert.fail(`a build step this test does not know: ${JSON.stringify(step)}`)
    }
    return artifacts
  }

  /** The deploy workflow on the workflow_run event of that build; returns the action's run. */
  async function runDeploy(
    number: number,
    headSha: string,
    artifacts: Map<string, string>,
    fork = { repo: FORK, branch: 'patch-1' },
  ): Promise<ActionRun> {
    const payload = {
      action: 'completed',
      workflow_run: {
        id: 9000 + number,
        name: build.name,
        event: 'pull_request',
        conclusion: 'success',
        head_sha: headSha,
        head_branch: fork.branch,
        head_repository: { full_name: fork.repo },
        repository: { full_name: REPO },
        // GitHub lists no pull request here when the head is in a fork.
        pull_requests: [],
      },
      repository: { full_name: REPO },
    }
    const job = Object.values(deploy.jobs)[0]!
    const context: Record<string, unknown> = {
      github: { event: payload, token: 'gh-write' },
      secrets: { GAMEHOST_TOKEN: 'gamehost-demo-token' },
      vars: { GAME_ID: GAME, PREVIEW_VERSION_ID: '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53' },
      steps: {},
    }
    assert.ok(job.if && condition(job.if, context), 'the deploy job runs on a successful build')
    const workspace = await tempDir()
    let action: ActionRun | undefined
    for (const step of job.steps) {
      if (step.uses?.startsWith('actions/download-artifact@')) {
        assert.equal(evaluate(step.with!['run-id']!, context), String(payload.workflow_run.id))
        await cp(artifacts.get(step.with!.name!)!, workspace, { recursive: true })
      } else if (step.run) {
        const outputs = await runStep(evaluate(step.run, context), workspace)
        if (step.id) (context.steps as Record<string, unknown>)[step.id] = { outputs }
      } else if (step.uses?.startsWith('studio/gamehost@')) {
        const inputs = Object.fromEntries(
          Object.entries(step.with ?? {}).map(([k, v]) => [k, evaluate(String(v), context)]),
        )
        inputs['api-url'] = emulator.url
        inputs['cdn-domain'] ??= emulator.url.replace('127.0.0.1', 'localhost')
        action = await runAction({
          entry: path.join(root, 'dist/index.js'),
          defaults,
          cwd: workspace,
          event: { name: 'workflow_run', payload },
          githubToken: 'gh-write',
          env: { GITHUB_API_URL: github.url, GITHUB_WORKSPACE: workspace },
          inputs,
        })
      } else assert.fail(`a deploy step this test does not know: ${JSON.stringify(step)}`)
    }
    assert.ok(action, 'the deploy workflow runs the action')
    return action
  }

  test('two pushes to a fork PR: one comment, updated in place, with the commit of each build', async () => {
    assert.equal(build.on, 'pull_request')
    const on = deploy.on as { workflow_run: { workflows: string[]; types: string[] } }
    assert.deepEqual(on.workflow_run.workflows, [build.name])
    assert.deepEqual(on.workflow_run.types, ['completed'])
    assert.equal(deploy.permissions?.['pull-requests'], 'write')
    github.addPullRequest(REPO, 21, {
      repo: FORK,
      ref: 'patch-1',
      sha: 'd2d2d2d333333333333333333333333333333333',
    })

    const first = await runDeploy(21, 'f0f0f0f111111111111111111111111111111111', await runBuild(21, SITE))
    assert.equal(first.exitCode, 0, first.stdout + first.stderr)
    const comments = () => github.comments(REPO, 21).filter((c) => c.body.includes('gamehost-preview'))
    assert.equal(comments().length, 1)
    const commentId = comments()[0]!.id
    assert.match(comments()[0]!.body, new RegExp(`Deployed site \`${first.outputs['site-id']}\``))
    assert.match(
      comments()[0]!.body,
      /\| Commit \| \[f0f0f0f\]\(https:\/\/github\.com\/studio\/space-game\/commit\/f0f0f0f1+\) \|/,
    )
    assert.equal(emulator.site(first.outputs['site-id']!)?.displayName, 'space-game pr-21 f0f0f0f')

    const changed = { ...SITE, 'index.html': '<!doctype html><title>second push</title>' }
    const second = await runDeploy(
      21,
      'e1e1e1e222222222222222222222222222222222',
      await runBuild(21, changed),
    )
    assert.equal(second.exitCode, 0, second.stdout + second.stderr)
    assert.equal(second.outputs.skipped, 'false')
    assert.notEqual(second.outputs['site-id'], first.outputs['site-id'])
    assert.equal(second.outputs['namespace-id'], first.outputs['namespace-id'])
    assert.equal(comments().length, 1, 'still one comment')
    assert.equal(comments()[0]!.id, commentId, 'the same comment, updated')
    assert.match(comments()[0]!.body, new RegExp(`Deployed site \`${second.outputs['site-id']}\``))
    assert.match(comments()[0]!.body, /\| Commit \| \[e1e1e1e\]/)
    assert.match(comments()[0]!.body, /\| Site name \| `space-game pr-21 e1e1e1e` \|/)

    // The same files built again: skipped, and the comment names the reused site by its own name.
    const third = await runDeploy(21, 'd2d2d2d333333333333333333333333333333333', await runBuild(21, changed))
    assert.equal(third.exitCode, 0, third.stdout + third.stderr)
    assert.equal(third.outputs.skipped, 'true')
    assert.equal(third.outputs['site-id'], second.outputs['site-id'])
    assert.equal(comments()[0]!.id, commentId)
    assert.match(comments()[0]!.body, /\| Site name \| `space-game pr-21 e1e1e1e` \|/)
    assert.match(comments()[0]!.body, /\| Commit \| \[d2d2d2d\]/)
  })

  test('a build that names another pull request than its own is refused before anything is deployed', async () => {
    github.addPullRequest(REPO, 22, { repo: FORK, ref: 'patch-2', sha: 'aaaa' })
    const requests = emulator.requests.length
    const run = await runDeploy(22, 'b0b0b0b444444444444444444444444444444444', await runBuild(22, SITE), {
      repo: 'mallory/space-game',
      branch: 'main',
    })
    assert.equal(run.exitCode, 1)
    assert.match(
      run.stdout,
      /::error::pull-request #22 is not the pull request this build ran for: its head is someone\/space-game:patch-2, the build ran on mallory\/space-game:main/,
    )
    assert.equal(emulator.requests.length, requests, 'nothing called on the service')
    assert.equal(github.comments(REPO, 22).length, 0)
  })

  test('pull-request on another event is refused with a reason', async () => {
    const run = await runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      event: { name: 'push', payload: {} },
      inputs: {
        'api-url': emulator.url,
        token: 'gamehost-demo-token',
        'game-id': GAME,
        'pull-request': '21',
      },
    })
    assert.equal(run.exitCode, 1)
    assert.match(run.stdout, /::error::pull-request is for workflow_run runs/)
    const bad = await runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults,
      cwd: root,
      event: { name: 'workflow_run', payload: {} },
      inputs: {
        'api-url': emulator.url,
        token: 'gamehost-demo-token',
        'game-id': GAME,
        'pull-request': '#21',
      },
    })
    assert.equal(bad.exitCode, 1)
    assert.match(bad.stdout, /::error::pull-request '#21' is not a pull request number/)
  })
})
