// Issue 36's CLI checks through what a user installs: `npm pack`, the tarball installed alone into a
// temporary prefix with --engine-strict, and its gamehost run on the machine's Node 20 (the oldest the
// package's engines take). GAMEHOST_NODE20 names another Node 20 when none is on PATH.
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

async function node20(): Promise<string> {
  const candidates = process.env.GAMEHOST_NODE20 ? [process.env.GAMEHOST_NODE20] : systemBinaries('node')
  for (const binary of candidates) {
    const version = (await run(binary, ['--version'])).stdout.trim()
    if (version.startsWith('v20.')) return binary
  }
  throw new Error(`no Node 20 among ${candidates.join(', ') || 'none'}: set GAMEHOST_NODE20 to one`)
}

describe('the packed tarball on Node 20', () => {
  let installed: Gamehost | undefined
  before(async () => {
    const node = await node20()
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

  cliChecks('npm pack, installed, on Node 20', () => installed!)
})
