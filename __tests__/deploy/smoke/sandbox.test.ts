// Chrome's sandbox: on wherever the OS lets Chrome start it, off as root on Linux and where Chrome
// says it cannot start it, with why. The real browser's part is in __tests__/bundles/smoke-isolation.test.ts.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  launchSandboxed,
  sandboxAtStart,
  sandboxRefused,
  type Host,
} from '../../../src/deploy/smoke/sandbox.ts'

const host = (over: Partial<Host> & { files?: Record<string, string> } = {}): Host => ({
  platform: 'linux',
  uid: 1001,
  read: (file) => over.files?.[file],
  ...over,
})
const NO_USABLE =
  'Failed to launch the browser process!\n[1:1:FATAL:zygote_host_impl_linux.cc(128)] No usable sandbox! ' +
  'Update your kernel or see https://chromium.googlesource.com/...'

describe('the sandbox', () => {
  test('on, except as root on Linux (Chrome refuses it to root)', () => {
    assert.deepEqual(sandboxAtStart(host()), { on: true })
    assert.deepEqual(sandboxAtStart(host({ platform: 'darwin', uid: 0 })), { on: true })
    assert.deepEqual(sandboxAtStart(host({ platform: 'win32', uid: undefined })), { on: true })
    assert.deepEqual(sandboxAtStart(host({ uid: 0 })), {
      on: false,
      why: 'the runner runs as root, and Chrome refuses its sandbox to root',
    })
  })

  test("Chrome's refusal, with why as the OS says it", () => {
    assert.equal(sandboxRefused(new Error('spawn ENOENT'), host()), undefined)
    assert.equal(sandboxRefused(new Error(NO_USABLE), host({ platform: 'darwin' })), undefined)
    const userns = host({ files: { '/proc/sys/kernel/unprivileged_userns_clone': '0' } })
    assert.match(sandboxRefused(new Error(NO_USABLE), userns)!.why!, /kernel\.unprivileged_userns_clone is 0/)
    const apparmor = host({ files: { '/proc/sys/kernel/apparmor_restrict_unprivileged_userns': '1' } })
    assert.match(
      sandboxRefused(new Error(NO_USABLE), apparmor)!.why!,
      /^AppArmor restricts unprivileged user namespaces \(kernel\.apparmor_restrict_unprivileged_userns is 1\)/,
    )
    assert.deepEqual(sandboxRefused(new Error(NO_USABLE), host()), {
      on: false,
      why:
        'Chrome could not start its sandbox here ([1:1:FATAL:zygote_host_impl_linux.cc(128)] No usable sandbox! ' +
        'Update your kernel or see https://chromium.googlesource.com/...)',
    })
  })

  test('launched with it; again without it only when Chrome refused it; once without it as root', async () => {
    const tries: boolean[] = []
    const launch = (answers: Array<Error | string>) => async (sandbox: boolean) => {
      tries.push(sandbox)
      const answer = answers.shift()!
      if (answer instanceof Error) throw answer
      return answer
    }
    assert.deepEqual(await launchSandboxed(launch(['b']), host()), { browser: 'b', sandbox: { on: true } })
    assert.deepEqual(tries.splice(0), [true])

    const again = await launchSandboxed(launch([new Error(NO_USABLE), 'b']), host())
    assert.equal(again.sandbox.on, false)
    assert.deepEqual(tries.splice(0), [true, false])

    const other = new Error('Timed out after 30000 ms while waiting for the WS endpoint')
    await assert.rejects(launchSandboxed(launch([other]), host()), (error) => error === other)
    assert.deepEqual(tries.splice(0), [true])

    const root = await launchSandboxed(launch(['b']), host({ uid: 0 }))
    assert.equal(root.sandbox.on, false)
    assert.deepEqual(tries.splice(0), [false])
  })
})
