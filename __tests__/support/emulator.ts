// The emulator as the tests outside __tests__/emulator start it: at the real service's defaults (issue
// 30), but for the publish delay, which only makes a test wait (the tests that take it are in
// __tests__/bundles/live-at-defaults.test.ts and __tests__/deploy/live/verify.pipeline.test.ts).

import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/index.ts'

export const FAST_FOR_TESTS = { publishDelayMs: 0 } as const satisfies EmulatorOptions

/** startEmulator with FAST_FOR_TESTS under the test's own options. */
export function startTestEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  return startEmulator({ ...FAST_FOR_TESTS, ...options })
}
