// The sweep through dist/sweep/index.js (as the runner runs it) and dist/cli/index.js, against the
// emulator and the GitHub stand-in: previews deployed through dist/index.js for pull requests open,
// closed and already retired; a sweep retires exactly those whose pull requests are closed (the
// closed page, the domain freed, the comment and deployments updated), a second sweep changes
// nothing, a dry run changes nothing, and a pull request GitHub cannot tell about fails the run at its
// end without stopping the others.
import assert from 'node:assert/strict'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fetchLocally, type Emulator } from '../../src/emulator/index.ts'
import { actionDefaults, runAction, type ActionRun } from '../../scripts/run-action.ts'
import { runCli } from '../support/cli.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { startGitHubStub, type GitHubStub } from '../support/github-api.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'

const REPO = 'studio/space-game'
const BOT = { login: 'github-actions[bot]', type: 'Bot' as const }
const GH_TOKEN = 'gh-sweep'

describe('the sweep', () => {
  let emulator: Emulator
  let github: GitHubStub
  let site: string
  let port: string
  let deployDefaults: Record<string, string>
  let sweepDefaults: Record<string, string>
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false })
    github = await startGitHubStub({ [GH_TOKEN]: { user: BOT, canComment: true, canDeploy: true } })
    site = await tempDir()
    await writeTree(site, { 'index.html': '<title>the game</title>', 'game.js': 'play()' })
    port = new URL(emulator.url).port
    deployDefaults = await actionDefaults(path.join(root, 'action.yml'))
    sweepDefaults = await actionDefaults(path.join(root, 'sweep/action.yml'))
  })
  after(async () => {
    await emulator.close()
    await github.close()
  })

  const headRef = (number: number) => `feature-${number}`
  const previewUrl = (number: number) => `http://demo-game--pr-${number}.localhost:${port}/`

  /** The deploy's run for pull request `number` (`opened` deploys it, `closed` retires it). */
  async function deployRun(
    number: number,
    action: 'opened' | 'closed',
    namespace = `pr-${number}`,
  ): Promise<void> {
    const run = await runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults: deployDefaults,
      cwd: root,
      githubToken: GH_TOKEN,
      event: {
        name: 'pull_request',
        payload: {
          action,
          number,
          pull_request: {
            number,
            head: { sha: 'abcdef1234567', ref: headRef(number), repo: { full_name: REPO } },
            base: { repo: { full_name: REPO } },
          },
        },
      },
      env: { GITHUB_API_URL: github.url, GITHUB_REF: `refs/pull/${number}/merge` },
      inputs: {
        'api-url': emulator.url,
        token: TOKEN,
        'game-id': GAME,
        path: site,
        namespace,
        domain: `${namespace}.preview.example.com`,
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
      },
    })
    assert.equal(run.exitCode, 0, run.stdout)
  }

  /** A preview deployed for an open pull request, with its GitHub deployment. */
  async function preview(number: number): Promise<void> {
    github.addPullRequest(REPO, number, { repo: REPO, ref: headRef(number), sha: 'abcdef1234567' })
    await deployRun(number, 'opened')
    github.addDeployment(REPO, headRef(number), `preview-pr-${number}`)
  }

  const sweep = (inputs: Record<string, string> = {}): Promise<ActionRun> =>
    runAction({
      entry: path.join(root, 'dist/sweep/index.js'),
      defaults: sweepDefaults,
      cwd: root,
      githubToken: GH_TOKEN,
      env: { GITHUB_API_URL: github.url, GITHUB_EVENT_NAME: 'schedule' },
      inputs: { 'api-url': emulator.url, token: TOKEN, 'game-id': GAME, ...inputs },
    })

  /** Everything a sweep could change: each namespace's version and domains, sites, comments, deployments. */
  function world(numbers: number[]) {
    return {
      namespaces: emulator
        .namespaces(GAME)
        .map((n) => ({
          nameId: n.nameId,
          versionId: n.versionId,
          domains: n.domains,
          pending: n.pendingDomains,
        }))
        .sort((a, b) => a.nameId.localeCompare(b.nameId)),
      sites: emulator.sites(GAME).length,
      comments: numbers.map((n) => github.comments(REPO, n).map((c) => c.body)),
      deployments: github.deployments(REPO).map((d) => d.statuses.map((s) => s.state)),
    }
  }
  const writes = () => github.requests.filter((r) => r.method !== 'GET').length

  /** gamehost sweep through dist/cli/index.js, for the repository's pull requests. */
  const cli = (...args: string[]) =>
    runCli(['sweep', '--api-url', emulator.url, '--game-id', GAME, '--repository', REPO, ...args], {
      GAMEHOST_TOKEN: TOKEN,
      GITHUB_TOKEN: GH_TOKEN,
      GITHUB_API_URL: github.url,
    })
  const domainsOf = (number: number) =>
    emulator.namespaces(GAME).find((n) => n.nameId === `pr-${number}`)!.domains

  test('retires exactly the previews whose pull requests are closed; a second sweep changes nothing', async () => {
    // 61 and 64 closed without their `closed` run; 62 open; 63 closed and retired by its `closed` run.
    for (const number of [61, 62, 63, 64]) await preview(number)
    github.setPullRequestState(REPO, 63, 'closed')
    await deployRun(63, 'closed')
    github.setPullRequestState(REPO, 61, 'closed')
    github.setPullRequestState(REPO, 64, 'closed')
    const numbers = [61, 62, 63, 64]
    const before = world(numbers)
    assert.deepEqual(domainsOf(61), ['pr-61.preview.example.com'])

    // A dry run lists them and changes nothing.
    const writesBefore = writes()
    const dry = await sweep({ 'dry-run': 'true' })
    assert.equal(dry.exitCode, 0, dry.stdout)
    assert.equal(dry.outputs.retired, '[]')
    assert.match(
      dry.stdout,
      /pr-61: pull request #61 is closed: the sweep would retire its preview \(dry run\)/,
    )
    assert.match(
      dry.stdout,
      /pr-64: pull request #64 is closed: the sweep would retire its preview \(dry run\)/,
    )
    assert.match(dry.summary, /gamehost sweep \(dry run\): would retire 2 previews/)
    assert.deepEqual(world(numbers), before)
    assert.equal(writes(), writesBefore, 'nothing is written to GitHub')

    const swept = await sweep()
    assert.equal(swept.exitCode, 0, swept.stdout)
    assert.deepEqual(JSON.parse(swept.outputs.retired!), ['pr-61', 'pr-64'])
    for (const number of [61, 64]) {
      const page = await fetchLocally(previewUrl(number))
      assert.match(page.text, new RegExp(`The preview of pull request #${number} was closed`))
      assert.equal(
        (await fetchLocally(`${previewUrl(number)}game.js`)).status,
        404,
        'no build content is served',
      )
      assert.deepEqual(domainsOf(number), [], 'the domain is free again')
      const comments = github.comments(REPO, number)
      assert.equal(comments.length, 1, 'the one sticky comment, updated')
      assert.match(
        comments[0]!.body,
        new RegExp(`🔒 Pull request #${number} was closed: the preview no longer serves its build`),
      )
      const [deployment] = github.deployments(REPO).filter((d) => d.ref === headRef(number))
      assert.deepEqual(
        deployment!.statuses.map((s) => s.state),
        ['inactive', 'success'],
      )
    }
    // The open one is served as it was; the one retired by its `closed` run is left as it was.
    assert.equal((await fetchLocally(previewUrl(62))).text, '<title>the game</title>')
    const after = world(numbers)
    for (const untouched of ['pr-62', 'pr-63', 'prod', 'staging'])
      assert.deepEqual(
        after.namespaces.find((n) => n.nameId === untouched),
        before.namespaces.find((n) => n.nameId === untouched),
        untouched,
      )
    assert.deepEqual(after.comments[1], before.comments[1])
    assert.deepEqual(after.comments[2], before.comments[2])
    assert.match(swept.summary, /gamehost sweep: retired 2 previews/)
    assert.match(swept.stdout, /pr-63 already serves the closed page: left as it is/)
    assert.match(swept.stdout, /pr-62: pull request #62 is open: left as it is/)

    // A second sweep: nothing to retire, nothing changed, nothing written to GitHub.
    const writesAfter = writes()
    const again = await sweep()
    assert.equal(again.exitCode, 0, again.stdout)
    assert.equal(again.outputs.retired, '[]')
    assert.deepEqual(world(numbers), after)
    assert.equal(writes(), writesAfter)
  })

  test('a pull request GitHub cannot tell about is left, the others are swept, and the run fails naming it', async () => {
    for (const number of [65, 66]) await preview(number)
    github.setPullRequestState(REPO, 65, 'closed')
    github.failPullRequest(REPO, 65, 502)
    github.setPullRequestState(REPO, 66, 'closed')
    let swept: ActionRun
    try {
      swept = await sweep()
    } finally {
      github.failPullRequest(REPO, 65, undefined)
    }
    assert.equal(swept.exitCode, 1, swept.stdout)
    assert.deepEqual(JSON.parse(swept.outputs.retired!), ['pr-66'])
    assert.match(
      swept.stdout,
      /^::error::Could not tell whether 1 pull request is open, so its preview was left as it is: pr-65 \(#65\): 502 /m,
    )
    assert.equal((await fetchLocally(previewUrl(65))).text, '<title>the game</title>')
    assert.match((await fetchLocally(previewUrl(66))).text, /#66 was closed/)
    const again = await sweep()
    assert.equal(again.exitCode, 0, again.stdout)
    assert.deepEqual(JSON.parse(again.outputs.retired!), ['pr-65'])
  })

  test('gamehost sweep: a dry run changes nothing; a sweep retires the closed ones; a second changes nothing', async () => {
    for (const number of [71, 72]) await preview(number)
    github.setPullRequestState(REPO, 71, 'closed')
    const numbers = [71, 72]
    const before = world(numbers)
    const dry = await cli('--dry-run')
    assert.equal(dry.code, 0, dry.stderr)
    assert.match(dry.stdout, /^gamehost sweep \(dry run\): would retire 1 preview$/m)
    assert.match(dry.stdout, /pr-71 +#71 +closed: would be retired/)
    assert.deepEqual(world(numbers), before)

    const swept = await cli('--json')
    assert.equal(swept.code, 0, swept.stderr)
    assert.deepEqual(JSON.parse(swept.stdout), { retired: ['pr-71'] })
    assert.match((await fetchLocally(previewUrl(71))).text, /#71 was closed/)
    assert.deepEqual(domainsOf(71), [])
    assert.equal((await fetchLocally(previewUrl(72))).text, '<title>the game</title>')
    const after = world(numbers)

    const again = await cli('--json')
    assert.equal(again.code, 0, again.stderr)
    assert.deepEqual(JSON.parse(again.stdout), { retired: [] })
    assert.deepEqual(world(numbers), after)
  })

  test('a prefix that matches a release skips the release, saying why, and retires the proven preview', async () => {
    // The release v2, built from its tag, and the preview of pull request 8, both under the prefix v.
    const release = await runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults: deployDefaults,
      cwd: root,
      event: { name: 'push', payload: {} },
      env: { GITHUB_REF: 'refs/tags/v2', GITHUB_SHA: 'abcdef1234567' },
      inputs: {
        'api-url': emulator.url,
        token: TOKEN,
        'game-id': GAME,
        path: site,
        namespace: 'v2',
        'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
        // Its own site, whose record names its tag: reuse-reviewed would publish the site of a preview
        // of the same build, whose record names that preview's pull request.
        'reuse-reviewed': 'false',
      },
    })
    assert.equal(release.exitCode, 0, release.stdout)
    github.addPullRequest(REPO, 8, { repo: REPO, ref: headRef(8), sha: 'abcdef1234567' })
    await deployRun(8, 'opened', 'v8')
    github.setPullRequestState(REPO, 8, 'closed')
    const releaseUrl = `http://demo-game--v2.localhost:${port}/`
    const releaseVersion = () => emulator.namespaces(GAME).find((n) => n.nameId === 'v2')!.versionId
    const served = releaseVersion()
    const why =
      'its record names ref refs/tags/v2, not refs/pull/2/merge: it is no preview of pull request #2'

    const dry = await cli('--namespace-prefix', 'v', '--dry-run')
    assert.equal(dry.code, 0, dry.stderr)
    assert.match(dry.stdout, /^gamehost sweep \(dry run\): would retire 1 preview$/m)
    assert.ok(dry.stdout.includes(`skipped: left as it is (${why})`), dry.stdout)

    const swept = await sweep({ 'namespace-prefix': 'v' })
    assert.equal(swept.exitCode, 0, swept.stdout)
    assert.deepEqual(JSON.parse(swept.outputs.retired!), ['v8'])
    assert.ok(swept.stdout.includes(`v2: skipped, left as it is: ${why}`), swept.stdout)
    assert.ok(swept.summary.includes(why), swept.summary)
    assert.equal(releaseVersion(), served, 'the release serves what it served')
    assert.equal((await fetchLocally(releaseUrl)).text, '<title>the game</title>')
    assert.ok(
      !github.requests.some((r) => r.path.endsWith('/pulls/2')),
      'GitHub is not asked about a namespace no record proves a preview',
    )
    assert.match((await fetchLocally(previewUrl(8).replace('pr-8', 'v8'))).text, /#8 was closed/)
  })
})
