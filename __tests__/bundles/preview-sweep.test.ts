// No schedule needed: each preview deploy (dist/index.js, as the runner runs it, against the emulator
// at its defaults and the GitHub stand-in) retires the other previews that are done with. Past
// max-previews the least recently deployed are retired first, each comment saying why and how to bring
// it back; a preview past preview-ttl is retired by another pull request's deploy; a pull request
// closed without its `closed` run has all its sites retired by the next preview deploy. The CLI
// (dist/cli/index.js) does the same from its deploy and its sweep.
//
// Every deploy here is real, one after the other: no state is seeded. A preview "deployed 31 days
// ago" is deployed while the emulator's clock is set 31 days back; the action reads its age from
// the service with its own clock, as it does on a runner.
import assert from 'node:assert/strict'
import path from 'node:path'
import { before, describe, test } from 'node:test'
import { fetchLocally } from '../../src/emulator/index.ts'
import { actionDefaults, runAction } from '../../scripts/run-action.ts'
import { runCli } from '../support/cli.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { startGitHubStub } from '../support/github-api.ts'
import { tempDir, writeTree } from '../support/helpers.ts'
import { GAME, TOKEN, root } from '../support/actions.ts'

const REPO = 'studio/space-game'
const BOT = { login: 'github-actions[bot]', type: 'Bot' as const }
const GH_TOKEN = 'gh-previews'
const DAY = 24 * 3_600_000

describe('each preview deploy sweeps the other previews', () => {
  let site: string
  let deployDefaults: Record<string, string>
  before(async () => {
    site = await tempDir()
    await writeTree(site, { 'index.html': '<title>the game</title>', 'game.js': 'play()' })
    deployDefaults = await actionDefaults(path.join(root, 'action.yml'))
  })

  /** A fresh service (its clock shifted by `shift.ms`) and GitHub for one test. */
  async function world() {
    const shift = { ms: 0 }
    const emulator = await startTestEmulator({ now: () => Date.now() + shift.ms })
    const github = await startGitHubStub({ [GH_TOKEN]: { user: BOT, canComment: true, canDeploy: true } })
    const port = new URL(emulator.url).port
    return { emulator, github, shift, port, close: () => Promise.all([emulator.close(), github.close()]) }
  }
  type World = Awaited<ReturnType<typeof world>>

  const headRef = (number: number) => `feature-${number}`

  /** Pull request `number` opened (or pushed to): its preview deployed to `namespace` by dist/index.js. */
  async function previewRun(w: World, number: number, inputs: Record<string, string> = {}) {
    const namespace = inputs.namespace ?? `pr-${number}`
    if (!w.github.deployments(REPO).some((d) => d.environment === `preview-${namespace}`)) {
      w.github.addPullRequest(REPO, number, { repo: REPO, ref: headRef(number), sha: 'abcdef1234567' })
      w.github.addDeployment(REPO, headRef(number), `preview-${namespace}`)
    }
    const run = await runAction({
      entry: path.join(root, 'dist/index.js'),
      defaults: deployDefaults,
      cwd: root,
      githubToken: GH_TOKEN,
      event: {
        name: 'pull_request',
        payload: {
          action: 'synchronize',
          number,
          pull_request: {
            number,
            head: { sha: 'abcdef1234567', ref: headRef(number), repo: { full_name: REPO } },
            base: { repo: { full_name: REPO } },
          },
        },
      },
      env: { GITHUB_API_URL: w.github.url, GITHUB_REF: `refs/pull/${number}/merge` },
      inputs: {
        'api-url': w.emulator.url,
        token: TOKEN,
        'game-id': GAME,
        path: site,
        namespace,
        'cdn-domain': w.emulator.url.replace('127.0.0.1', 'localhost'),
        ...inputs,
      },
    })
    assert.equal(run.exitCode, 0, run.stdout)
    return run
  }

  const hostOf = (w: World, namespace: string) => `http://demo-game--${namespace}.localhost:${w.port}/`
  const served = async (w: World, namespace: string) => (await fetchLocally(hostOf(w, namespace))).text
  const commentOf = (w: World, number: number) => {
    const comments = w.github.comments(REPO, number)
    assert.equal(comments.length, 1, `pull request #${number} has its one sticky comment`)
    return comments[0]!.body
  }

  test('30 previews with max-previews 20: the 10 least recently deployed are retired, each comment saying why', async () => {
    const w = await world()
    try {
      const numbers = Array.from({ length: 30 }, (_, i) => 101 + i)
      const retired = async () => {
        const closed: number[] = []
        for (const number of numbers)
          if (/Preview closed/.test(await served(w, `pr-${number}`))) closed.push(number)
        return closed
      }
      // The first 20 fill the cap, five at a time: each five deployed after the five before them.
      for (let batch = 0; batch < 4; batch++) {
        const five = numbers.slice(batch * 5, batch * 5 + 5)
        await Promise.all(five.map((number) => previewRun(w, number, { 'max-previews': '20' })))
      }
      assert.deepEqual(await retired(), [], 'none retired while 20 or fewer are live')
      // From the 21st on, each new preview first retires the least recently deployed one.
      for (const number of numbers.slice(20)) {
        const run = await previewRun(w, number, { 'max-previews': '20' })
        assert.match(run.stdout, /pr-1\d\d: 21 previews were live or going live, more than max-previews: 20/)
        const closed = await retired()
        assert.equal(closed.length, number - 120, `one more retired by the deploy of #${number}`)
        const oldestBatches = numbers.slice(0, Math.ceil((number - 120) / 5) * 5)
        assert.ok(
          closed.every((n) => oldestBatches.includes(n)),
          `${closed.join()} are the oldest`,
        )
      }
      assert.deepEqual(await retired(), numbers.slice(0, 10))
      const unescaped = (markdown: string) => markdown.replace(/\\(.)/g, '$1')
      for (const number of numbers) {
        const page = await served(w, `pr-${number}`)
        if (number <= 110) {
          assert.match(page, new RegExp(`The preview of pull request #${number} was retired`))
          const comment = unescaped(commentOf(w, number))
          assert.match(
            comment,
            /🔒 The preview was retired: 21 previews were live or going live, more than max-previews: 20, and this one was among the least recently deployed/,
          )
          assert.match(comment, /A push to the pull request \(or a re-run of its deploy\) brings it back/)
          const [deployment] = w.github.deployments(REPO).filter((d) => d.ref === headRef(number))
          assert.equal(deployment!.statuses[0]!.state, 'inactive')
        } else {
          assert.equal(page, '<title>the game</title>', `pr-${number} still serves its build`)
          assert.match(commentOf(w, number), /✅ Deployed site/)
        }
      }
      // A push to a retired preview's pull request brings it back, and the cap retires the next oldest.
      const back = await previewRun(w, 101, { 'max-previews': '20' })
      assert.equal(await served(w, 'pr-101'), '<title>the game</title>')
      assert.deepEqual(
        (await retired()).filter((n) => n > 110),
        [(/pr-(11\d): 21 previews were live or going live/.exec(back.stdout) ?? [])[1]].map(Number),
      )
    } finally {
      await w.close()
    }
  })

  test("a preview past preview-ttl is retired by another pull request's deploy", async () => {
    const w = await world()
    try {
      w.shift.ms = -29 * DAY
      await previewRun(w, 202)
      w.shift.ms = -31 * DAY
      await previewRun(w, 201)
      w.shift.ms = 0
      const run = await previewRun(w, 203)
      assert.match(
        run.stdout,
        /pr-201: it was not deployed for 31 days, longer than preview-ttl: 30d: retiring its preview/,
      )
      assert.match(run.stdout, /Retired 1 other preview: pr-201/)
      assert.match(await served(w, 'pr-201'), /was retired \(it was not deployed for 31 days/)
      assert.equal(await served(w, 'pr-202'), '<title>the game</title>', 'under its age: kept')
      assert.match(
        commentOf(w, 201).replace(/\\(.)/g, '$1'),
        /🔒 The preview was retired: it was not deployed for 31 days, longer than preview-ttl: 30d\. It no longer serves its build\. A push/,
      )
    } finally {
      await w.close()
    }
  })

  test('two sites of one pull request closed without a `closed` run: the next preview deploy retires both', async () => {
    const w = await world()
    try {
      await previewRun(w, 301, { namespace: 'pr-301-game', domain: 'pr-301-game.preview.example.com' })
      await previewRun(w, 301, { namespace: 'pr-301-launcher' })
      await previewRun(w, 302)
      assert.equal(w.github.comments(REPO, 301).length, 2, 'one comment per site')
      w.github.setPullRequestState(REPO, 301, 'closed')

      const run = await previewRun(w, 303)
      assert.match(run.stdout, /Retired 2 other previews: pr-301-game, pr-301-launcher/)
      for (const namespace of ['pr-301-game', 'pr-301-launcher'])
        assert.match(await served(w, namespace), /The preview of pull request #301 was closed/)
      assert.equal(await served(w, 'pr-302'), '<title>the game</title>', 'an open pull request is kept')
      const game = w.emulator.namespaces(GAME).find((n) => n.nameId === 'pr-301-game')!
      assert.deepEqual(game.domains, [], 'its domain is free again')
      for (const comment of w.github.comments(REPO, 301))
        assert.match(comment.body, /🔒 Pull request #301 was closed: the preview no longer serves its build/)
      const asked = w.github.requests.filter((r) => r.path === `/repos/${REPO}/pulls/301`)
      assert.equal(asked.length, 1, 'pull request 301 is asked about once; the open ones are listed at once')
      assert.ok(!w.github.requests.some((r) => r.path === `/repos/${REPO}/pulls/302`))

      // The next deploy finds them retired: nothing more is asked or changed.
      const writes = w.github.requests.filter((r) => r.method !== 'GET').length
      const again = await previewRun(w, 302)
      assert.match(again.stdout, /No other preview to retire/)
      assert.equal(
        w.github.requests.filter((r) => r.method !== 'GET').length - writes,
        1,
        "only 302's own comment",
      )
    } finally {
      await w.close()
    }
  })

  test('the CLI: a deploy to a preview namespace makes room past --max-previews; gamehost sweep retires by age', async () => {
    const w = await world()
    try {
      const cli = (args: string[], env: Record<string, string> = {}) =>
        runCli(
          [
            ...args,
            '--api-url',
            w.emulator.url,
            '--game-id',
            GAME,
            '--cdn-domain',
            w.emulator.url.replace('127.0.0.1', 'localhost'),
          ],
          {
            GAMEHOST_TOKEN: TOKEN,
            ...env,
          },
        )
      const deploy = (number: number, extra: string[] = []) =>
        cli(['deploy', '--path', site, '--namespace', `pr-${number}`, ...extra], {
          GITHUB_REPOSITORY: REPO,
          GITHUB_REF: `refs/pull/${number}/merge`,
          GITHUB_SHA: 'abcdef1234567abcdef1234567abcdef12345678',
        })
      // No age here (--preview-ttl 0): the cap alone.
      w.shift.ms = -40 * DAY
      assert.equal((await deploy(401, ['--preview-ttl', '0'])).code, 0)
      w.shift.ms = 0
      assert.equal((await deploy(402, ['--preview-ttl', '0'])).code, 0)
      const third = await deploy(403, ['--max-previews', '2', '--preview-ttl', '0'])
      assert.equal(third.code, 0, third.stderr)
      assert.match(
        third.stderr + third.stdout,
        /pr-401: 3 previews were live or going live, more than --max-previews 2/,
      )
      assert.match(await served(w, 'pr-401'), /Preview closed/)
      assert.equal(await served(w, 'pr-402'), '<title>the game</title>')

      w.shift.ms = -40 * DAY
      assert.equal((await deploy(404, ['--preview-ttl', '0'])).code, 0)
      w.shift.ms = 0
      const sweep = (...args: string[]) =>
        cli(['sweep', '--repository', REPO, ...args], {
          GITHUB_TOKEN: GH_TOKEN,
          GITHUB_API_URL: w.github.url,
        })
      for (const number of [402, 403, 404])
        w.github.addPullRequest(REPO, number, { repo: REPO, ref: headRef(number), sha: 'abcdef1234567' })
      const dry = await sweep('--dry-run', '--json')
      assert.equal(dry.code, 0, dry.stderr)
      assert.match(
        dry.stderr + dry.stdout,
        /pr-404: it was not deployed for 40 days, longer than --preview-ttl 30d: the sweep would retire its preview \(dry run\)/,
      )
      const swept = await sweep('--json')
      assert.equal(swept.code, 0, swept.stderr)
      assert.deepEqual(JSON.parse(swept.stdout), { retired: ['pr-404'] })
      assert.equal(await served(w, 'pr-403'), '<title>the game</title>')
    } finally {
      await w.close()
    }
  })
})
