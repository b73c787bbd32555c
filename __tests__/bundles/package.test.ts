// The published package: `npm pack` holds the CLI's bundle, README and licence, and
// nothing else; the tarball installs alone (no dependency) with --engine-strict on Node 24, and its
// `gamehost` runs; on a Node its engines do not take (Node 20, past its end of life), it is refused. And the npm scripts' one-line reason on a Node without
// type stripping (npm ci --ignore-scripts leaves node_modules/.bin/node out).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { accessSync, constants, realpathSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { siteFiles, tempDir, writeTree } from '../support/helpers.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const run = promisify(execFile)

/** The first `name` on PATH outside any node_modules: what a user's shell runs. */
function systemBinary(name: string): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir || dir.includes('node_modules')) continue
    try {
      accessSync(path.join(dir, name), constants.X_OK)
      return realpathSync(path.join(dir, name))
    } catch {
      // not here
    }
  }
  throw new Error(`no ${name} on PATH outside node_modules`)
}

const npmCli = systemBinary('npm')
const machineNode = systemBinary('node')
const node24 = path.join(root, 'node_modules/node/bin/node')
const nodes = [{ label: 'Node 24 (the node devDependency)', binary: node24 }]

/** Runs with only `node`'s folder and the system's on PATH, as in a fresh CI job. */
function envFor(node: string): NodeJS.ProcessEnv {
  return {
    HOME: process.env.HOME,
    PATH: [path.dirname(node), '/usr/bin', '/bin'].join(path.delimiter),
    npm_config_update_notifier: 'false',
  }
}

describe('the npm package', () => {
  let tarball: string
  let files: string[]
  let site: string
  before(async () => {
    const out = await tempDir()
    const packed = await run(process.execPath, [npmCli, 'pack', '--json', '--pack-destination', out], {
      cwd: root,
      env: envFor(process.execPath),
    })
    const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>
    tarball = path.join(out, info!.filename)
    files = info!.files.map((f) => f.path).sort()
    site = await tempDir()
    await writeTree(site, siteFiles(5))
  })

  test('npm pack holds the CLI bundle, README, LICENSE and package.json: no action bundle, test or source', () => {
    // The actions run from the git repository (uses: studio/gamehost@v0), never from npm: the package
    // is the CLI, one bundle, and the chunks ncc split off it: the smoke test's browser driver, loaded
    // only when the check runs.
    const chunk = /^dist\/cli\/\d+\.index\.js$/
    assert.ok(
      files.some((file) => chunk.test(file)),
      "the smoke test's chunks are packed",
    )
    assert.deepEqual(
      files.filter((file) => !chunk.test(file)),
      [
        'LICENSE',
        'README.md',
        'dist/cli/index.js',
        'dist/cli/licenses.txt',
        'dist/cli/package.json',
        'package.json',
      ],
    )
  })

  test('package.json: publishable, a bin, no runtime dependencies, engines the CLI is tested on', async () => {
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as Record<string, unknown>
    assert.equal(pkg.private, undefined)
    assert.deepEqual(pkg.bin, { gamehost: 'dist/cli/index.js' })
    assert.equal(pkg.dependencies, undefined, 'every bundled package is a devDependency')
    assert.deepEqual(pkg.engines, { node: '>=22.19' })
    assert.equal(pkg.license, 'MIT')
    assert.match(await readFile(path.join(root, 'LICENSE'), 'utf8'), /^MIT License/)
    const readme = await readFile(path.join(root, 'README.md'), 'utf8')
    assert.ok(
      readme.includes(`npm install --global gamehost@${String(pkg.version)}`),
      'the README installs this version',
    )
  })

  for (const node of nodes) {
    test(`installs alone with --engine-strict on ${node.label}; gamehost --help and a dry-run deploy run`, async () => {
      const env = envFor(node.binary)
      const version = (await run(node.binary, ['--version'])).stdout.trim()
      const prefix = await tempDir()
      await run(
        node.binary,
        [
          npmCli,
          'install',
          '--engine-strict',
          '--offline',
          '--no-audit',
          '--no-fund',
          '--prefix',
          prefix,
          tarball,
        ],
        { cwd: prefix, env },
      )
      const installed = (await readdir(path.join(prefix, 'node_modules'))).filter((n) => !n.startsWith('.'))
      assert.deepEqual(installed, ['gamehost'], `only gamehost is installed (${version})`)

      const gamehost = path.join(prefix, 'node_modules/.bin/gamehost')
      const help = await run(gamehost, ['--help'], { env })
      assert.match(help.stdout, /^Usage: gamehost <command> \[flags\]/)
      assert.match(help.stdout, /deploy +Deploy a built site/)

      const dry = await run(
        gamehost,
        [
          'deploy',
          // A dry run calls nothing: no server listens there.
          '--api-url',
          'http://127.0.0.1:9',
          '--game-id',
          '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
          '--path',
          site,
          '--dry-run',
          '--json',
        ],
        { env: { ...env, GAMEHOST_TOKEN: 'gamehost-demo-token' } },
      )
      const outputs = JSON.parse(dry.stdout) as Record<string, unknown>
      assert.equal(outputs['file-count'], 5, `${version}: ${dry.stderr}`)
      assert.match(String(outputs.digest), /^sha256:[0-9a-f]{64}$/)
      assert.equal(outputs['site-id'], null)
    })
  }

  test('on a Node older than 22.19, --engine-strict refuses the install, naming the range', async (t) => {
    const version = (await run(machineNode, ['--version'])).stdout.trim()
    if (!/^v(1\d|20|21|22\.(\d|1[0-8])\.)/.test(version)) return t.skip(`the machine's Node is ${version}`)
    const prefix = await tempDir()
    const refused = await run(
      machineNode,
      [
        npmCli,
        'install',
        '--engine-strict',
        '--offline',
        '--no-audit',
        '--no-fund',
        '--prefix',
        prefix,
        tarball,
      ],
      { cwd: prefix, env: envFor(machineNode) },
    ).then(
      () => assert.fail(`installed on ${version}`),
      (error: { stderr: string }) => error,
    )
    assert.match(refused.stderr, /EBADENGINE|Unsupported engine/)
    assert.match(refused.stderr, />=22\.19/)
  })

  test('every npm script that runs TypeScript first checks the Node it runs on', async () => {
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>
    }
    const typescript = Object.entries(pkg.scripts).filter(([, line]) =>
      /\bnode (?!scripts\/check-node)/.test(line),
    )
    assert.ok(typescript.length >= 5)
    for (const [name, line] of typescript) {
      assert.ok(line.startsWith('node scripts/check-node.js && '), `${name}: ${line}`)
    }
  })

  test('on a Node without type stripping the scripts stop with one line saying what to do', async (t) => {
    const system = machineNode
    const [major, minor] = (await run(system, ['-p', 'process.versions.node'])).stdout
      .trim()
      .split('.')
      .map(Number)
    if (major! > 22 || (major === 22 && minor! >= 18))
      return t.skip('no Node older than 22.18 on this machine')
    const failed = await run(system, [path.join(root, 'scripts/check-node.js')]).then(
      () => assert.fail('check-node.js passed on an old Node'),
      (error: { code: number; stderr: string }) => error,
    )
    assert.equal(failed.code, 1)
    assert.equal(failed.stderr.trim().split('\n').length, 1)
    assert.match(failed.stderr, /npm ci --ignore-scripts/)
    assert.match(failed.stderr, /npm rebuild node --ignore-scripts=false/)
    await run(path.join(root, 'node_modules/node/bin/node'), [path.join(root, 'scripts/check-node.js')])
  })
})
