// The emulator's public API.

export { startEmulator } from './server.ts'
export type { Emulator, RecordedRequest } from './server.ts'
export type { EmulatorOptions, EmulatorTimer, RateLimit } from './options.ts'
export type { FaultCounters, FaultKind, FaultOptions, ScriptedAnswer } from './faults.ts'
export { DEFAULT_SEED } from './seed.ts'
export type { Seed, SeedGame, SeedNamespace, SeedToken } from './seed.ts'
export type { NamespaceView, SitePartView, SiteView } from './state.ts'
export { fetchLocally } from './local-fetch.ts'
