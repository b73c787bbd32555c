// Messages give each platform's remedy for running out of file descriptors: no ulimit on Windows,
// launchd's cap on macOS.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { descriptorLimitRemedy, NO_FOLLOW, readFlags } from '../../src/deploy/platform.ts'
import { constants } from 'node:fs'

test('Linux is told to raise ulimit -n, and for the upload to lower concurrency too', () => {
  assert.equal(descriptorLimitRemedy('linux'), 'raise the limit (ulimit -n)')
  assert.equal(descriptorLimitRemedy('linux', true), 'raise the limit (ulimit -n), or lower concurrency')
})

test("macOS is told ulimit -n and launchd's cap", () => {
  assert.match(descriptorLimitRemedy('darwin'), /ulimit -n.*launchctl limit maxfiles/)
  assert.match(descriptorLimitRemedy('darwin', true), /, or lower concurrency$/)
})

test('Windows is never told ulimit as a command: it has none', () => {
  assert.equal(descriptorLimitRemedy('win32', true), 'lower concurrency (Windows has no ulimit)')
  assert.doesNotMatch(descriptorLimitRemedy('win32'), /ulimit -n|concurrency/)
})

test('the read flags hold O_NOFOLLOW where the system has it, and nothing of it without', () => {
  assert.equal(NO_FOLLOW, constants.O_NOFOLLOW ?? 0)
  assert.equal(readFlags(0) & (constants.O_NOFOLLOW ?? 0), 0)
  assert.equal(readFlags(NO_FOLLOW) & NO_FOLLOW, NO_FOLLOW)
})
