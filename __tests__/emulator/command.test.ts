// The emulator's command line: the flags of the service's behaviour (issue 30) are parsed and refused
// as documented. Running it is tested through npm run emulator (__tests__/bundles/emulator-main.test.ts).
import assert from 'node:assert/strict'
import { createServer, type AddressInfo } from 'node:net'
import { test } from 'node:test'
import { runEmulatorCommand } from '../../src/emulator/command.ts'

async function run(args: string[]) {
  const out: string[] = []
  const err: string[] = []
  const code = await runEmulatorCommand(args, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
  })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

test('--help names the flags of the service behaviour and their defaults', async () => {
  const { code, out } = await run(['--help'])
  assert.equal(code, 0)
  for (const flag of ['--multipart-threshold', '--publish-delay', '--serve-on-create', '--verify-domains']) {
    assert.match(out, new RegExp(flag))
  }
  assert.match(out, /default 5242880, 5 MiB/)
  assert.match(out, /default 3000/)
  assert.match(out, /lostPublishes/)
})

test('bad values of those flags exit 2 saying what is wrong', async () => {
  for (const [args, message] of [
    [['--verify-domains', 'later'], /--verify-domains must be "pending" or "at-once"/],
    [['--publish-delay', '1.5'], /--publish-delay must be an integer from 0/],
    [['--multipart-threshold', 'never'], /--multipart-threshold must be an integer/],
    [['--faults', '{"lostPublishes":[0]}'], /faults\.lostPublishes must be an array of publish numbers/],
  ] as const) {
    const { code, err } = await run([...args])
    assert.equal(code, 2, args.join(' '))
    assert.match(err, message)
  }
})

test('a port in use exits 1 naming the port and --port', async () => {
  const busy = createServer()
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
  try {
    const { port } = busy.address() as AddressInfo
    const { code, err } = await run(['--port', String(port)])
    assert.equal(code, 1)
    assert.equal(
      err,
      `gamehost emulator: port ${port} on 127.0.0.1 is in use (another emulator?): ` +
        'pass --port <port> for another one, or --port 0 for any free port',
    )
  } finally {
    await new Promise((resolve) => busy.close(resolve))
  }
})
