// The emulator's command line: the flags of the service's behaviour (issue 30) are parsed and refused
// as documented. Running it is tested through npm run emulator (__tests__/bundles/emulator-main.test.ts).
import assert from 'node:assert/strict'
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
