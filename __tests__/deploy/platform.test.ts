// Messages give each platform's remedy for running out of file descriptors: no ulimit on Windows,
// launchd's cap on macOS.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { descriptorLimitRemedy, NO_FOLLOW, readFlags } from '../../src/deploy/platform.ts'
import { constants } from 'node:fs'

test('Linux is told to raise ulimit -n', () => {
  assert.equal(descriptorLimitRemedy('linux'), 'raise the limit (ulimit -n)')
})

test("macOS is told ulimit -n and launchd's cap", () => {
  assert.match(descriptorLimitRemedy('darwin'), /ulimit -n.*launchctl limit maxfiles/)
})

test('Windows is never told ulimit as a command: it has none', () => {
  assert.doesNotMatch(descriptorLimitRemedy('win32'), /ulimit -n|concurrency/)
})

test('the read flags hold O_NOFOLLOW where the system has it, and nothing of it without', () => {
  assert.equal(NO_FOLLOW, constants.O_NOFOLLOW ?? 0)
  assert.equal(readFlags(0) & (constants.O_NOFOLLOW ?? 0), 0)
  assert.equal(readFlags(NO_FOLLOW) & NO_FOLLOW, NO_FOLLOW)
})
