// The emulator's command line, shared by `npm run emulator` (main.ts) and `gamehost emulator` (the CLI):
// flags, the seed file, the welcome text; runs the emulator until SIGINT, SIGTERM or SIGHUP, or until
// the process that started it is gone. It prints through `io`, so each front end decides where its
// lines go.

import { readFile } from 'node:fs/promises'
import { networkInterfaces } from 'node:os'
import { parseArgs } from 'node:util'
import { checkScriptRoutes, resolveFaults, type FaultOptions } from './faults.ts'
import { routeKeys } from './routes/index.ts'
import type { EmulatorOptions } from './options.ts'
import { checkSeed, DEFAULT_SEED, type Seed } from './seed.ts'
import { startEmulator, type Emulator } from './server.ts'
import { cancelSignals } from '../common/cancel.ts'
import { errorMessage } from '../common/format.ts'

/** Where the command prints: standard output and standard error, one line per call. */
export interface CommandIO {
  out(line: string): void
  err(line: string): void
}

/** The usage text; `command` is how the user runs it (`npm run emulator --`, `gamehost emulator`). */
function emulatorUsage(command: string): string {
  return `Usage: ${command} [options]

Runs a local emulator of the game hosting service.

Options:
  --port <port>                  port to listen on (default 8787, 0 for any free port)
  --host <host>                  address to listen on (default 127.0.0.1)
  --cdn-domain <domain>          domain the namespaces' live sites are served under, on the same port,
                                   by Host: <game>--<namespace>.<domain> (default localhost, which a
                                   browser on this machine resolves to the emulator)
  --seed <file.json>             tokens, games, namespaces... to start with (default: the demo seed)
  --part-size <bytes>            size of upload parts (default 104857600, 100 MiB)
  --multipart-threshold <bytes>  files of at least this size are multipart uploads, one URL per part
                                   (default 5242880, 5 MiB, as the service since v24.6; "none" gives
                                   one PUT per file whatever its size, as v24.5 did)
  --publish-delay <ms>           how long a publish or a domain change takes to reach the namespace's
                                   host, as the CDN's worker and router take (default 3000; 0: at once)
  --serve-on-create              a namespace created directly on a version serves it (default: it
                                   serves nothing until a publish, the service's creation race lost)
  --verify-domains <when>        "pending" (default): a custom domain is served only once verified with
                                   POST /_emulator/domains/<domain>/verify; "at-once": when added
  --no-rate-limit                turn off the limits (per client address, 15-minute windows of 16 writes /
                                   128 reads a minute)
  --faults <json>                inject faults, to try a flaky deploy: a JSON object of
                                   seed (PRNG seed, default 1),
                                   putErrorRate, putResetRate, putStallRate, putWrongEtagRate,
                                   apiErrorRate (fractions from 0 to 1), putStallCount (first N PUTs stall),
                                   script ({"METHOD /pattern": ["429" | "503" | "reset", ...]}),
                                   lostPublishes (publishes, counted from 1, that never reach the host)
                                 e.g. --faults '{"putErrorRate":0.2,"putResetRate":0.05,"apiErrorRate":0.1}'
  --latency <ms>                 wait this long before handling each request, like a real network's
                                   round trip (default 0)
  --help                         show this help`
}

interface CommandLine {
  options: Omit<EmulatorOptions, 'seed'>
  seedFile: string | undefined
}

/**
 * Runs the command with its arguments (without the command itself). Resolves with exit code 2 for a
 * bad flag or seed, 0 after --help, and undefined once the emulator is listening: it then runs until
 * SIGINT or SIGTERM, and sets process.exitCode to 1 if it cannot stop cleanly.
 */
export async function runEmulatorCommand(
  args: string[],
  io: CommandIO,
  command = 'npm run emulator --',
): Promise<number | undefined> {
  let commandLine: CommandLine
  let seed: Seed
  try {
    const parsed = parseCommandLine(args)
    if (parsed === 'help') {
      io.out(emulatorUsage(command))
      return 0
    }
    commandLine = parsed
    seed = parsed.seedFile === undefined ? DEFAULT_SEED : await readSeed(parsed.seedFile)
  } catch (error) {
    io.err(`gamehost emulator: ${errorMessage(error)}`)
    io.err('Run with --help for the options.')
    return 2
  }

  let emulator: Emulator
  try {
    emulator = await startEmulator({ ...commandLine.options, seed, log: (line) => io.out(line) })
  } catch (error) {
    if (isAddressInUse(error)) {
      const { host = '127.0.0.1', port } = commandLine.options
      io.err(
        `gamehost emulator: port ${port} on ${host} is in use (another emulator?): ` +
          'pass --port <port> for another one, or --port 0 for any free port',
      )
      return 1
    }
    // A bad option value (such as --cdn-domain) is refused before anything listens.
    if (!(error instanceof RangeError)) throw error
    io.err(`gamehost emulator: ${errorMessage(error)}`)
    io.err('Run with --help for the options.')
    return 2
  }

  const parentGone = watchParent(() => {
    io.out('The process that started the emulator is gone.')
    stop()
  })
  let stopping = false
  const stop = () => {
    clearInterval(parentGone)
    if (stopping) return
    stopping = true
    io.out('Stopping the emulator.')
    emulator.close().catch((error: unknown) => {
      io.err(`gamehost emulator: could not stop cleanly: ${errorMessage(error)}`)
      process.exitCode = 1
    })
  }
  for (const signal of cancelSignals()) process.once(signal, stop)
  // A closed terminal sends SIGHUP: the uploaded parts' temporary folder goes then as well.
  process.once('SIGHUP', stop)
  // Said once every way to stop it listens: a signal sent on seeing these lines stops it cleanly.
  printWelcome(listeningUrl(emulator.url, commandLine.options.host ?? '127.0.0.1', io), seed, emulator, io)
  if (commandLine.options.faults) io.out(`Injecting faults: ${JSON.stringify(commandLine.options.faults)}`)
  return undefined
}

/** How often the emulator checks that the process that started it is still there. */
const PARENT_CHECK_MS = 500

/**
 * Calls `gone` once the process that started this one has ended: `npm run emulator` stopped with
 * `kill` ends npm and its shell, not the emulator, which would hold its port until the machine
 * restarts. An orphan is adopted by another process (init, a subreaper): its parent id changes.
 */
function watchParent(gone: () => void): NodeJS.Timeout {
  const parent = process.ppid
  const timer = setInterval(() => {
    if (process.ppid === parent) return
    clearInterval(timer)
    gone()
  }, PARENT_CHECK_MS)
  return timer.unref()
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/i

/**
 * The URL to print for where the emulator listens: a wildcard host (0.0.0.0, ::) is no address to
 * connect to, so the machine's own addresses are listed instead. Anything but loopback is reachable
 * from the network, and so is the seed's token: that is said on standard error.
 */
function listeningUrl(url: string, host: string, io: CommandIO): string {
  if (LOOPBACK.test(host)) return url
  const port = new URL(url).port
  const wildcard = host === '0.0.0.0' || host === '::' || host === '[::]'
  if (wildcard) {
    const addresses = Object.values(networkInterfaces())
      .flat()
      .filter((address) => address !== undefined)
      .filter((address) => host !== '0.0.0.0' || address.family === 'IPv4')
      .map(
        (address) => `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${port}`,
      )
    io.out(
      `gamehost emulator listens on every address of this machine (${host}), port ${port}: ${addresses.join(', ')}`,
    )
  }
  io.err(
    `gamehost emulator: warning: listening on ${host}, not on loopback: anyone on the network who can reach ` +
      'this machine can call it, with the token printed below. Use --host 127.0.0.1 to keep it local.',
  )
  return wildcard ? `http://${host === '0.0.0.0' ? '127.0.0.1' : '[::1]'}:${port}` : url
}

function parseCommandLine(args: string[]): CommandLine | 'help' {
  const { values } = parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'cdn-domain': { type: 'string' },
      seed: { type: 'string' },
      'part-size': { type: 'string' },
      'multipart-threshold': { type: 'string' },
      'no-rate-limit': { type: 'boolean' },
      faults: { type: 'string' },
      latency: { type: 'string' },
      'publish-delay': { type: 'string' },
      'serve-on-create': { type: 'boolean' },
      'verify-domains': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) return 'help'
  const options: CommandLine['options'] = {
    port: values.port === undefined ? 8787 : integerFlag('--port', values.port, 0, 65535),
    host: values.host ?? '127.0.0.1',
  }
  if (values['cdn-domain'] !== undefined) options.cdnDomain = values['cdn-domain']
  if (values['part-size'] !== undefined) options.partSize = integerFlag('--part-size', values['part-size'], 1)
  const threshold = values['multipart-threshold']
  if (threshold !== undefined) {
    options.multipartThreshold =
      threshold === 'none' ? Number.POSITIVE_INFINITY : integerFlag('--multipart-threshold', threshold, 1)
  }
  if (values['publish-delay'] !== undefined) {
    options.publishDelayMs = integerFlag('--publish-delay', values['publish-delay'], 0, 600_000)
  }
  if (values['serve-on-create']) options.serveOnCreate = true
  const verify = values['verify-domains']
  if (verify !== undefined) {
    if (verify !== 'pending' && verify !== 'at-once') {
      throw new Error(`--verify-domains must be "pending" or "at-once", got "${verify}"`)
    }
    options.verifyDomains = verify
  }
  if (values['no-rate-limit']) options.rateLimit = false
  if (values.faults !== undefined) options.faults = faultsFlag(values.faults)
  if (values.latency !== undefined) options.latencyMs = integerFlag('--latency', values.latency, 0, 60_000)
  return { options, seedFile: values.seed }
}

function integerFlag(flag: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const number = /^\d+$/.test(value) ? Number(value) : NaN
  if (!Number.isSafeInteger(number) || number < min || number > max) {
    throw new Error(`${flag} must be an integer from ${min} to ${max}, got "${value}"`)
  }
  return number
}

function faultsFlag(json: string): FaultOptions {
  let faults: unknown
  try {
    faults = JSON.parse(json)
  } catch (error) {
    throw new Error(`--faults must be a JSON object: ${errorMessage(error)}`, { cause: error })
  }
  try {
    checkScriptRoutes(resolveFaults(faults), routeKeys())
  } catch (error) {
    throw new Error(`--faults: ${errorMessage(error)}`, { cause: error })
  }
  return faults as FaultOptions
}

async function readSeed(file: string): Promise<Seed> {
  try {
    const seed = JSON.parse(await readFile(file, 'utf8')) as Seed
    checkSeed(seed)
    return seed
  } catch (error) {
    throw new Error(`the seed ${file} is not usable: ${errorMessage(error)}`, { cause: error })
  }
}

function isAddressInUse(error: unknown): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
}

function printWelcome(url: string, seed: Seed, emulator: Emulator, io: CommandIO): void {
  const token = seed.tokens.find((candidate) => candidate.expiresAt === undefined) ?? seed.tokens[0]
  const gameId = token?.gameIds[0]
  const game = seed.games.find((candidate) => candidate.id === gameId)
  const latest = game?.versions.at(-1)
  const namespace = game?.namespaces?.[0]
  const environment = game?.environments?.[0]
  const lobby = game?.lobbies?.[0]
  io.out(`gamehost emulator listening on ${url}`)
  io.out(`  token:          ${token?.token ?? '(none in the seed)'}`)
  io.out(`  game id:        ${gameId ?? '(none)'}`)
  io.out(`  version id:     ${(typeof latest === 'string' ? latest : latest?.id) ?? '(none)'} (the latest)`)
  io.out(`  namespace id:   ${namespace ? `${namespace.id} (${namespace.nameId})` : '(none)'}`)
  io.out(`  environment id: ${environment?.id ?? '(none)'}`)
  io.out(`  lobby id:       ${lobby?.lobby_id ?? '(none)'}`)
  if (gameId && namespace) {
    io.out(
      `  live site:      ${emulator.namespaceUrl(gameId, namespace.id)} (once a version with a CDN site is published)`,
    )
  }
  if (token && gameId) {
    io.out(`Try: curl -H 'Authorization: Bearer ${token.token}' ${url}/cloud/games/${gameId}`)
  }
  io.out('Press Ctrl+C to stop.')
}
