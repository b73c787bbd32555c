// The defects the properties of transfer.property.test.ts found, each as the smallest case that
// shows it: a todo until it is fixed (then the todo goes, and so does what keeps the generators from
// drawing it: KNOWN_DEFECTS in builds.ts).
import { test } from 'node:test'
import { startTestEmulator } from '../support/emulator.ts'
import { virtualTime } from '../support/virtual-time.ts'
import { GEOMETRIES, type Build } from './builds.ts'
import { deployStep, freshNamespace } from './steps.ts'

const build = (files: Build['files']): Build => ({
  geometry: 'small',
  includeHidden: false,
  siteRecord: true,
  files,
})

// Found by the properties on the transfer before issue 44: the site answer's streaming parser
// (@streamparser/json) dropped every U+FEFF of a string, so the presigned requests named a path the
// build did not have and the deploy failed once the site was created. The plain JSON.parse keeps it.
test('a file whose name holds U+FEFF is served as any other', async () => {
  const emulator = await startTestEmulator({ ...GEOMETRIES.small, rateLimit: false })
  try {
    const files = [
      { path: 'index.html', size: 1, seed: 0 },
      { path: 'a\ufeffb.txt', size: 1, seed: 1 },
    ]
    await deployStep({ emulator, nameId: freshNamespace(), inputs: {} }, build(files), [], false)
  } finally {
    await emulator.close()
  }
})

// A new namespace whose first publish never reaches its host is left on that version, served nowhere.
// When the next deploy is not seen live either, its rollback puts the namespace "back" on that first
// version, which it never served: the failed deploy makes a build live that was never seen live.
test(
  'a failed deploy leaves the namespace serving what it served, after a first publish that was lost',
  { todo: 'known defect: the rollback publishes the version the namespace is on, though never served' },
  async () => {
    const time = virtualTime(Date.now())
    const emulator = await startTestEmulator({
      ...GEOMETRIES.small,
      rateLimit: false,
      faults: { lostPublishes: [1, 2] },
      timer: time.timer,
    })
    try {
      const target = {
        emulator,
        nameId: freshNamespace(),
        inputs: { 'verify-timeout': '5' },
        deps: { clock: time.clock, sleep: time.sleep },
      }
      const first = build([{ path: 'index.html', size: 0, seed: 0 }])
      await deployStep(target, first, [], true)
      await deployStep(target, build([{ path: 'index.html', size: 1, seed: 0 }]), ['index.html'], true)
    } finally {
      await emulator.close()
    }
  },
)
