import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'

const MAIN = fileURLToPath(new URL('../src/emulator/main.ts', import.meta.url))

function runMain(args: string[]) {
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  return { child, exited, output: () => ({ stdout, stderr }) }
}

function waitForOutput(run: ReturnType<typeof runMain>, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(run.output().stdout)
      if (!match) return
      run.child.stdout.off('data', check)
      resolve(match)
    }
    run.child.stdout.on('data', check)
    void run.exited.then(() => reject(new Error(`the emulator exited: ${JSON.stringify(run.output())}`)))
  })
}

describe('npm run emulator', () => {
  test('prints how to use it, logs each request and stops on SIGINT', async () => {
    const run = runMain(['--port', '0', '--no-rate-limit'])
    const [, url] = await waitForOutput(run, /listening on (http:\/\/\S+)/)
    const response = await fetch(`${url}/cloud/games/demo-game/avatars?x=1`, {
      headers: { authorization: 'Bearer gamehost-demo-token' },
    })
    assert.equal(response.status, 200)
    await response.arrayBuffer()
    run.child.kill('SIGINT')
    assert.equal(await run.exited, 0)
    const { stdout } = run.output()
    assert.match(stdout, /gamehost-demo-token/)
    assert.match(stdout, /demo-game/)
    assert.match(stdout, /demo-version-1/)
    assert.match(stdout, /^GET \/cloud\/games\/demo-game\/avatars 200$/m)
  })

  test('a bad flag is reported on stderr with exit code 2', async () => {
    const badArgs = [
      ['--bogus'],
      ['--port', 'eighty'],
      ['--part-size', '0'],
      ['--seed', '/nonexistent/seed.json'],
    ]
    await Promise.all(
      badArgs.map(async (args) => {
        const run = runMain(args)
        assert.equal(await run.exited, 2, args.join(' '))
        assert.match(run.output().stderr, /gamehost emulator: /)
      }),
    )
  })

  test('--help prints the usage', async () => {
    const run = runMain(['--help'])
    assert.equal(await run.exited, 0)
    assert.match(run.output().stdout, /--multipart-threshold/)
  })
})
