// The servers, lobby-logs, avatars, validate and publish actions through their bundles
// (dist/<name>/index.js), with one call the service never answers: a SIGINT while it is in flight, and
// the action's deadline (GAMEHOST_DEADLINE_SECONDS), each end the step promptly, failed, with a message
// that says why and what was done. The service is the emulator behind a proxy that holds that call.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { spawn } from 'node:child_process'
import { createServer, request, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { setTimeout as tick } from 'node:timers/promises'
import { DEFAULT_SEED, type Emulator } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { actionDefaults, runAction, type ActionRun } from '../../scripts/run-action.ts'
import {
  CRASHED_LOBBY,
  GAME,
  NAMESPACE,
  TOKEN,
  commands,
  root,
  stagingSeed,
  type ActionName,
} from '../support/actions.ts'

const STAGING = '7a2e5c8f-1b4d-4e9a-a3c6-8d1f4b7e0c92'
const [OLD] = DEFAULT_SEED.games[0]!.versions.slice(-2).map((v) => (typeof v === 'string' ? v : v.id))
/** From the signal (or the deadline) to the process's end, at most, on a busy machine. */
const PROMPTLY_MS = 5_000
/** A run still going this long after its signal or its start is killed, and its test fails. */
const GIVE_UP_MS = 20_000

interface Held {
  url: string
  /** Requests the proxy holds and never answers. */
  held: () => number
  close(): void
}

/** A proxy to `target` that holds forever every request `hold` picks, and forwards the others. */
async function holdingProxy(target: string, hold: (req: IncomingMessage) => boolean): Promise<Held> {
  let held = 0
  const server: Server = createServer((req, res) => {
    if (hold(req)) {
      held++
      req.resume()
      return
    }
    const forwarded = request(
      new URL(req.url!, target),
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers)
        answer.pipe(res)
      },
    )
    forwarded.on('error', () => res.destroy())
    req.pipe(forwarded)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held: () => held,
    close: () => {
      server.closeAllConnections()
      server.close()
    },
  }
}

interface Case {
  name: ActionName
  inputs: Record<string, string>
  /** The call the service never answers. */
  hold: (req: IncomingMessage) => boolean
  /** What the failure message says was done before it. */
  done: string
  note: string
}

const READS_ONLY = 'It only reads: nothing was changed.'
const CASES: Case[] = [
  {
    name: 'servers',
    inputs: { 'environment-id': STAGING, 'include-destroyed': 'true' },
    // The second page: the first one was listed.
    hold: (req) =>
      req.url!.startsWith(`/games/${GAME}/environments/${STAGING}/servers`) && req.url!.includes('cursor='),
    done: 'servers stopped after: page 1 listed (3 servers in all)',
    note: READS_ONLY,
  },
  {
    name: 'lobby-logs',
    inputs: { 'namespace-id': NAMESPACE, 'lobby-id': CRASHED_LOBBY.lobby_id },
    hold: (req) => req.url!.includes('/logs/lobbies/'),
    done: 'lobby-logs stopped before any call was answered',
    note: READS_ONLY,
  },
  {
    name: 'avatars',
    inputs: {},
    hold: (req) => req.url === `/cloud/games/${GAME}/avatars`,
    done: 'avatars stopped before any call was answered',
    note: READS_ONLY,
  },
  {
    name: 'validate',
    inputs: {
      'namespace-id': NAMESPACE,
      'lobby-count-max': '4',
      'max-players': '8',
      'group-display-name': 'A Group',
    },
    // The matchmaker config is validated first, then the group's name: that call hangs.
    hold: (req) => req.url === '/cloud/groups/validate',
    done: 'validate stopped after: matchmaker config validated',
    note: READS_ONLY,
  },
  {
    name: 'publish',
    inputs: { namespace: 'prod', 'version-id': OLD! },
    hold: (req) => req.method === 'PUT' && req.url!.endsWith(`/namespaces/${NAMESPACE}/version`),
    done:
      "publish stopped after: read game demo-game; read version '0.9.0' (" +
      OLD! +
      '); namespace prod was being switched to it (the call may or may not have been made)',
    note: "Publishing changes only the namespace's version, in its last call: a re-run publishes the same version again (a promotion makes its version of the target's config anew; one made before the stop stays unpublished).",
  },
]

describe('the operation actions cancel and have a deadline', () => {
  let emulator: Emulator
  const defaults = new Map<ActionName, Record<string, string>>()
  before(async () => {
    emulator = await startTestEmulator({ seed: stagingSeed(8).seed, serversPageSize: 3, rateLimit: false })
    for (const { name } of CASES)
      defaults.set(name, await actionDefaults(path.join(root, name, 'action.yml')))
  })
  after(() => emulator.close())

  /** Runs the action through the proxy; `stop` is called once its call hangs there, and returns when. */
  const runHeld = async (
    spec: Case,
    env: Record<string, string>,
    stop: (pid: number) => void,
  ): Promise<{ run: ActionRun; afterStopMs: number }> => {
    const proxy = await holdingProxy(emulator.url, spec.hold)
    try {
      let pid: number | undefined
      let exited = false
      const running = runAction({
        entry: path.join(root, 'dist', spec.name, 'index.js'),
        defaults: defaults.get(spec.name),
        cwd: root,
        env,
        inputs: { 'api-url': proxy.url, token: TOKEN, 'game-id': GAME, ...spec.inputs },
        onSpawn: (id) => (pid = id),
      })
      void running.finally(() => (exited = true))
      while (proxy.held() === 0 && !exited) await tick(5)
      assert.ok(!exited, 'the action was still waiting for its call')
      const stopped = Date.now()
      stop(pid!)
      // A build that never stops by itself fails here rather than hanging the suite.
      const guard = setTimeout(() => process.kill(pid!, 'SIGKILL'), GIVE_UP_MS)
      const run = await running.finally(() => clearTimeout(guard))
      return { run, afterStopMs: Date.now() - stopped }
    } finally {
      proxy.close()
    }
  }

  /** `gamehost servers` through dist/cli, its second page held; `stop` is called once it hangs. */
  const cliHeld = async (env: Record<string, string>, stop: (kill: () => void) => void) => {
    const spec = CASES[0]!
    const proxy = await holdingProxy(emulator.url, spec.hold)
    try {
      const child = spawn(
        process.execPath,
        [
          path.join(root, 'dist/cli/index.js'),
          'servers',
          ...['--api-url', proxy.url, '--game-id', GAME, '--environment-id', STAGING, '--include-destroyed'],
        ],
        {
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', GAMEHOST_TOKEN: TOKEN, ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      )
      let output = ''
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
      const closed = once(child, 'close') as Promise<[number | null]>
      while (proxy.held() === 0 && child.exitCode === null) await tick(5)
      assert.equal(child.exitCode, null, output)
      const stopped = Date.now()
      stop(() => child.kill('SIGINT'))
      const guard = setTimeout(() => child.kill('SIGKILL'), GIVE_UP_MS)
      const [code] = await closed.finally(() => clearTimeout(guard))
      return { code, output, afterStopMs: Date.now() - stopped }
    } finally {
      proxy.close()
    }
  }

  test('the CLI: Ctrl-C while a call is in flight exits 130 at once, saying what was done', async () => {
    const { code, output, afterStopMs } = await cliHeld({}, (kill) => kill())
    assert.equal(code, 130, output)
    assert.match(output, /Cancelling: nothing new starts/)
    assert.ok(output.includes(`The run was cancelled (SIGINT): ${CASES[0]!.done}. ${READS_ONLY}`), output)
    assert.ok(afterStopMs < PROMPTLY_MS, `${afterStopMs} ms from SIGINT to the end`)
  })

  test('the CLI: its deadline ends it, exit 1, saying it ran out of time', async () => {
    const { code, output } = await cliHeld({ GAMEHOST_DEADLINE_SECONDS: '1' }, () => {})
    assert.equal(code, 1, output)
    assert.ok(
      output.includes(
        `The servers run ran out of time: it did not finish within its deadline of 1 s: ${CASES[0]!.done}.`,
      ),
      output,
    )
  })

  for (const spec of CASES) {
    test(`${spec.name}: SIGINT while its call is in flight ends it promptly, failed, saying it was cancelled and what was done`, async () => {
      const { run, afterStopMs } = await runHeld(spec, {}, (pid) => process.kill(pid, 'SIGINT'))
      assert.equal(run.exitCode, 1, run.stdout)
      assert.deepEqual(commands(run, 'error'), [
        `::error::The run was cancelled (SIGINT): ${spec.done}. ${spec.note}`,
      ])
      assert.ok(afterStopMs < PROMPTLY_MS, `${afterStopMs} ms from SIGINT to the end`)
    })

    test(`${spec.name}: its deadline ends it, failed, saying it ran out of time and what was done`, async () => {
      const started = Date.now()
      const { run } = await runHeld(spec, { GAMEHOST_DEADLINE_SECONDS: '2' }, () => {})
      const took = Date.now() - started
      assert.equal(run.exitCode, 1, run.stdout)
      assert.deepEqual(commands(run, 'error'), [
        `::error::The ${spec.name} run ran out of time: it did not finish within its deadline of 2 s: ${spec.done}. ${spec.note}`,
      ])
      assert.ok(took < 2_000 + 2 * PROMPTLY_MS, `${took} ms for a deadline of 2 s`)
    })
  }
})
