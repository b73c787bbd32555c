// The emulator for the benchmark, in a process of its own: the real service's upload shape (one
// presigned PUT per file, whatever its size), no rate limit, and each PUT answered after
// --put-latency ms (the round trip to an object store a CI runner sees). For the fault runs,
// --latency delays every request (API and store, as the emulator's own --latency does) and --faults
// injects faults (the emulator's --faults JSON). --discard keeps no byte (no disk, no MD5): a store
// that costs nothing per file, so that the deploy's own cost per file shows. Prints its URL.
import { parseArgs } from 'node:util'
import { startEmulator, type FaultOptions } from '../../src/emulator/index.ts'

const { values } = parseArgs({
  options: {
    'put-latency': { type: 'string', default: '0' },
    latency: { type: 'string', default: '0' },
    faults: { type: 'string' },
    discard: { type: 'boolean', default: false },
  },
})
const emulator = await startEmulator({
  rateLimit: false,
  multipartThreshold: Number.MAX_SAFE_INTEGER,
  putLatencyMs: Number(values['put-latency']),
  latencyMs: Number(values.latency),
  discardBytes: values.discard,
  faults: values.faults === undefined ? undefined : (JSON.parse(values.faults) as FaultOptions),
})
console.log(`gamehost emulator listening on ${emulator.url}`)
const stop = () => void emulator.close().then(() => process.exit(0))
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
