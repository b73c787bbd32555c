// The defects the properties of transfer.property.test.ts found, each as the smallest case that
// shows it: a todo until it is fixed (then the todo goes, and so does what keeps the generators from
// drawing it: KNOWN_DEFECTS in builds.ts).
import { test } from 'node:test'
import { startTestEmulator } from '../support/emulator.ts'
import { virtualTime } from '../support/virtual-time.ts'
import { GEOMETRIES, KNOWN_DEFECT_ATOMS, type Build } from './builds.ts'
import { deployStep, freshNamespace } from './steps.ts'

const build = (files: Build['files']): Build => ({
  geometry: 'small',
  includeHidden: false,
  siteRecord: true,
  files,
})

// The parser of the site's answer (@streamparser/json 0.0.26) drops every U+FEFF of a string: it
// decodes each character with a TextDecoder that strips a byte-order mark. The presigned requests then
// name a path the build does not have, and the deploy fails once the site is created.
test(
  'a file whose name holds U+FEFF is served as any other',
  { todo: 'known defect: U+FEFF is dropped from the paths of the site answer' },
  async () => {
    const emulator = await startTestEmulator({ ...GEOMETRIES.small, rateLimit: false })
    try {
      const files = [
        { path: 'index.html', size: 1, seed: 0 },
        ...KNOWN_DEFECT_ATOMS.map((atom, i) => ({ path: `a${atom}b.txt`, size: 1, seed: i })),
      ]
      await deployStep({ emulator, nameId: freshNamespace(), inputs: {} }, build(files), [], false)
    } finally {
      await emulator.close()
    }
  },
)

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
