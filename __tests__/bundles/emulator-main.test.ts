import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'

const MAIN = fileURLToPath(new URL('../../src/emulator/main.ts', import.meta.url))

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
    const response = await fetch(`${url}/cloud/games/4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86/avatars?x=1`, {
      headers: { authorization: 'Bearer gamehost-demo-token' },
    })
    assert.equal(response.status, 200)
    await response.arrayBuffer()
    run.child.kill('SIGINT')
    assert.equal(await run.exited, 0)
    const { stdout } = run.output()
    assert.match(stdout, /gamehost-demo-token/)
    assert.match(stdout, /4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86/)
    // Every seed id a newcomer needs to try each sub-action.
    assert.match(stdout, /version id: +8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53 \(the latest\)/)
    assert.match(stdout, /namespace id: +3f6c2a9e-8b1d-4c7a-9e25-5d0b7a41c8f2 \(prod\)/)
    assert.match(stdout, /environment id: +0f3c6a9d-2e5b-4a8c-9d71-3b6e0c4f8a15/)
    assert.match(stdout, /lobby id: +7d4e1a2b-3c5f-4e6a-8b9c-0d1e2f3a4b5c/)
    assert.match(stdout, /^GET \/cloud\/games\/4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86\/avatars 200$/m)
  })

  test('--faults injects faults and says so', async () => {
    const faults = { script: { 'GET /cloud/games/:game_id/avatars': ['503'] } }
    const run = runMain(['--port', '0', '--faults', JSON.stringify(faults)])
    const [, url] = await waitForOutput(run, /listening on (http:\/\/\S+)/)
    const get = () =>
      fetch(`${url}/cloud/games/4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86/avatars`, {
        headers: { authorization: 'Bearer gamehost-demo-token' },
      })
    const refused = await get()
    assert.equal(refused.status, 503)
    assert.equal(((await refused.json()) as { code: string }).code, 'API_SERVICE_UNAVAILABLE')
    const answered = await get()
    assert.equal(answered.status, 200)
    await answered.arrayBuffer()
    run.child.kill('SIGINT')
    assert.equal(await run.exited, 0)
    const { stdout } = run.output()
    assert.match(stdout, /^Injecting faults: \{"script":/m)
    assert.match(
      stdout,
      /^GET \/cloud\/games\/4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86\/avatars 503 \(fault: api-error\)$/m,
    )
    assert.match(stdout, /^GET \/cloud\/games\/4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86\/avatars 200$/m)
  })

  test('bad --faults are reported on stderr with exit code 2', async () => {
    const badFaults: Array<[string, RegExp]> = [
      ['{', /--faults must be a JSON object/],
      ['[]', /--faults: emulator option faults must be an object/],
      ['{"bogus":1}', /unknown key "bogus"/],
      ['{"putErrorRate":2}', /faults\.putErrorRate must be a number from 0 to 1/],
      ['{"script":{"GET /nope":["503"]}}', /no such route/],
    ]
    await Promise.all(
      badFaults.map(async ([json, message]) => {
        const run = runMain(['--faults', json])
        assert.equal(await run.exited, 2, json)
        assert.match(run.output().stderr, /^gamehost emulator: /)
        assert.match(run.output().stderr, message)
      }),
    )
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

  test('stopped with kill (SIGTERM) it frees its port; with the process that started it gone, too', async () => {
    const termed = runMain(['--port', '0', '--no-rate-limit'])
    const [, termedUrl] = await waitForOutput(termed, /listening on (http:\/\/\S+)/)
    termed.child.kill('SIGTERM')
    assert.equal(await termed.exited, 0)
    await assert.rejects(fetch(termedUrl!), 'nothing listens on its port any more')

    // As `npm run emulator` runs it: under a shell, which `kill` ends without passing the signal on.
    const shell = spawn('sh', ['-c', `"${process.execPath}" "${MAIN}" --port 0 --no-rate-limit; true`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let stdout = ''
    shell.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    // The emulator holds the pipe too: it closes once the emulator has ended.
    const closed = once(shell.stdout, 'close')
    while (!/listening on (http:\/\/\S+)/.test(stdout)) await new Promise((r) => setTimeout(r, 20))
    const url = /listening on (http:\/\/\S+)/.exec(stdout)![1]!
    assert.ok((await fetch(`${url}/cloud/games/x`)).status >= 400, 'it answers')
    shell.kill('SIGKILL')
    const started = Date.now()
    await closed
    assert.ok(Date.now() - started < 5000, `the emulator ended ${Date.now() - started} ms after its parent`)
    assert.match(stdout, /The process that started the emulator is gone\.\nStopping the emulator\./)
    await assert.rejects(fetch(url), 'its port is free')
  })

  test('--help prints the usage', async () => {
    const run = runMain(['--help'])
    assert.equal(await run.exited, 0)
    assert.match(run.output().stdout, /--multipart-threshold/)
    assert.match(run.output().stdout, /--faults <json>/)
  })
})
