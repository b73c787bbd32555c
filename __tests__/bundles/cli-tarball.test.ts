// Issue 36's CLI checks through what a user installs: `npm pack`, the tarball installed alone into a
// temporary prefix with --engine-strict, and its gamehost run on the oldest Node the package's engines
// take that this machine has: GAMEHOST_NODE22 names a Node 22.19+, else Node 24 (the devDependency).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { accessSync, constants, realpathSync } from 'node:fs'
import path from 'node:path'
import { before, describe } from 'node:test'
import { promisify } from 'node:util'
import { root } from '../support/actions.ts'
import { cliChecks } from '../support/cli-checks.ts'
import type { Gamehost } from '../support/cli.ts'
import { tempDir } from '../support/helpers.ts'

const run = promisify(execFile)

/** Every `name` on PATH outside any node_modules, as `which -a` lists them. */
function systemBinaries(name: string): string[] {
  const found: string[] = []
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir || dir.includes('node_modules')) continue
    try {
      accessSync(path.join(dir, name), constants.X_OK)
      found.push(realpathSync(path.join(dir, name)))
    } catch {
      // not here
    }
  }
  return [...new Set(found)]
}

async function oldestNode(): Promise<string> {
  const candidates = [process.env.GAMEHOST_NODE22, ...systemBinaries('node')].filter((b) => b !== undefined)
  for (const binary of candidates) {
    const [major = 0, minor = 0] = (await run(binary, ['-p', 'process.versions.node'])).stdout
      .split('.')
      .map(Number)
    if (major === 22 ? minor >= 19 : major > 22 && major < 24) return binary
  }
  return path.join(root, 'node_modules/node/bin/node')
}

describe('the packed tarball on the oldest Node it takes', () => {
  let installed: Gamehost | undefined
  before(async () => {
    const node = await oldestNode()
    const npm = systemBinaries('npm')[0]
    assert.ok(npm, 'npm on PATH')
    const env = {
      HOME: process.env.HOME,
      PATH: [path.dirname(node), '/usr/bin', '/bin'].join(path.delimiter),
      npm_config_update_notifier: 'false',
    }
    const out = await tempDir()
    const packed = await run(process.execPath, [npm, 'pack', '--json', '--pack-destination', out], {
      cwd: root,
      env: { ...env, PATH: [path.dirname(process.execPath), env.PATH].join(path.delimiter) },
    })
    const [info] = JSON.parse(packed.stdout) as Array<{ filename: string }>
    const prefix = await tempDir()
    const tarball = path.join(out, info!.filename)
    await run(
      node,
      [
        npm,
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
    installed = { node, cli: path.join(prefix, 'node_modules/gamehost/dist/cli/index.js') }
  })

  cliChecks('npm pack, installed, on the oldest Node it takes', () => installed!)
})
