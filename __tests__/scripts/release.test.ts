// What release.yml checks before it tags and publishes (scripts/release/release.ts), and that this
// repository passes what can be checked before a release is cut: its READMEs install what it makes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { packageVersion, readmes, readRepoFile } from '../../scripts/release/files.ts'
import {
  bumpInstallLines,
  changelogSections,
  cutChangelog,
  installLineProblems,
  releaseNotes,
  releaseProblems,
  releaseTags,
} from '../../scripts/release/release.ts'

const CHANGELOG = `# Changelog

All notable changes.

## [Unreleased]

### Fixed

- Something after 1.2.0.

## [1.2.0] - 2026-11-20

### Added

- The thing.
- Another thing.

## [1.1.0]

- Undated.

## [1.0.0] - 2026-01-02

[unreleased]: https://github.com/studio/gamehost/compare/v1.2.0...HEAD
[1.2.0]: https://github.com/studio/gamehost/compare/v1.1.0...v1.2.0
`

const README = [
  '- uses: studio/gamehost@v1',
  '| [`studio/gamehost/publish@v1`](publish/README.md) | ... |',
  'npm install --global gamehost@1.2.0   # or, in a clone',
].join('\n')

test('a release of X.Y.Z tags vX.Y.Z and moves vX; anything else is no release version', () => {
  assert.deepEqual(releaseTags('0.1.0'), { tag: 'v0.1.0', major: 'v0' })
  assert.deepEqual(releaseTags('12.0.3'), { tag: 'v12.0.3', major: 'v12' })
  for (const version of ['1.2', 'v1.2.3', '1.2.3-rc.1', '1.2.3+build', '01.2.3', ''])
    assert.throws(() => releaseTags(version), /is not a release version X\.Y\.Z/, version)
})

test("the CHANGELOG's sections: version, date and text, up to the next heading or the link references", () => {
  assert.deepEqual(changelogSections(CHANGELOG), [
    { version: 'Unreleased', date: undefined, body: '### Fixed\n\n- Something after 1.2.0.' },
    { version: '1.2.0', date: '2026-11-20', body: '### Added\n\n- The thing.\n- Another thing.' },
    { version: '1.1.0', date: undefined, body: '- Undated.' },
    { version: '1.0.0', date: '2026-01-02', body: '' },
  ])
  assert.equal(releaseNotes(CHANGELOG, '1.2.0'), '### Added\n\n- The thing.\n- Another thing.')
  assert.throws(() => releaseNotes(CHANGELOG, '1.3.0'), /no section '## \[1\.3\.0\] - YYYY-MM-DD'/)
  assert.equal(
    releaseNotes(CHANGELOG.replace(/\n/g, '\r\n'), '1.2.0'),
    '### Added\n\n- The thing.\n- Another thing.',
  )
})

test('a release goes out when the tag, package.json, the CHANGELOG and the READMEs agree', () => {
  const release = { version: '1.2.0', tag: 'v1.2.0', changelog: CHANGELOG, readmes: { 'README.md': README } }
  assert.deepEqual(releaseProblems(release), [])
  assert.deepEqual(releaseProblems({ ...release, tag: undefined }), [])
})

test('a release is refused, every reason named, when they disagree', () => {
  const readmes = { 'README.md': README }
  assert.deepEqual(releaseProblems({ version: '1.2.0', tag: 'v1.2.1', changelog: CHANGELOG, readmes }), [
    "the tag 'v1.2.1' is not package.json's version: it would be 'v1.2.0'",
  ])
  assert.deepEqual(releaseProblems({ version: '1.3.0', tag: 'v1.3.0', changelog: CHANGELOG, readmes }), [
    "CHANGELOG.md has no section '## [1.3.0] - YYYY-MM-DD'",
    'README.md installs gamehost@1.2.0: the release publishes 1.3.0',
  ])
  assert.deepEqual(releaseProblems({ version: '1.1.0', changelog: CHANGELOG, readmes }), [
    "CHANGELOG.md's section [1.1.0] has no date (## [1.1.0] - YYYY-MM-DD)",
    'README.md installs gamehost@1.2.0: the release publishes 1.1.0',
  ])
  assert.deepEqual(releaseProblems({ version: '1.0.0', changelog: CHANGELOG, readmes }), [
    "CHANGELOG.md's section [1.0.0] is empty",
    'README.md installs gamehost@1.2.0: the release publishes 1.0.0',
  ])
  assert.deepEqual(releaseProblems({ version: '2.0.0-beta', changelog: CHANGELOG, readmes }), [
    "package.json's version: '2.0.0-beta' is not a release version X.Y.Z (no pre-release, no build)",
  ])
})

test("the READMEs' install lines must name the major tag the release moves and the version it publishes", () => {
  assert.deepEqual(installLineProblems('2.0.0', { 'README.md': README }), [
    'README.md uses studio/gamehost@v1: the release moves v2',
    'README.md installs gamehost@1.2.0: the release publishes 2.0.0',
  ])
  assert.deepEqual(
    installLineProblems('1.2.0', { 'a.md': '`studio/gamehost/servers@main` and `studio/gamehost@v1`' }),
    ['a.md uses studio/gamehost@main: the release moves v1'],
  )
})

test("this repository's READMEs and docs install what a release of package.json's version makes", async () => {
  const docs = await readmes()
  assert.ok(Object.keys(docs).includes('publish/README.md') && Object.keys(docs).includes('docs/recipes.md'))
  assert.deepEqual(installLineProblems(await packageVersion(), docs), [])
})

test('CHANGELOG.md is a Keep a Changelog file: an Unreleased section first, then dated versions', async () => {
  const sections = changelogSections(await readRepoFile('CHANGELOG.md'))
  assert.equal(sections[0]?.version, 'Unreleased')
  for (const section of sections.slice(1)) {
    assert.doesNotThrow(() => releaseTags(section.version), section.version)
    assert.match(section.date ?? '', /^\d{4}-\d{2}-\d{2}$/, `the date of ${section.version}`)
    assert.ok(section.body, `the text of ${section.version}`)
  }
})

test('cutting a release moves the Unreleased text under the dated version and links it to the last tag', () => {
  const cut = cutChangelog(CHANGELOG, '1.3.0', '2026-12-01')
  assert.ok(cut.includes('## [Unreleased]\n\n## [1.3.0] - 2026-12-01\n\n### Fixed\n'), cut)
  const sections = changelogSections(cut)
  assert.deepEqual(sections.slice(0, 3), [
    { version: 'Unreleased', date: undefined, body: '' },
    { version: '1.3.0', date: '2026-12-01', body: '### Fixed\n\n- Something after 1.2.0.' },
    { version: '1.2.0', date: '2026-11-20', body: '### Added\n\n- The thing.\n- Another thing.' },
  ])
  assert.match(cut, /^\[unreleased\]: https:\/\/github\.com\/studio\/gamehost\/compare\/v1\.3\.0\.\.\.HEAD$/m)
  assert.match(
    cut,
    /^\[1\.3\.0\]: https:\/\/github\.com\/studio\/gamehost\/compare\/v1\.2\.0\.\.\.v1\.3\.0$/m,
  )
  assert.deepEqual(releaseProblems({ version: '1.3.0', tag: 'v1.3.0', changelog: cut, readmes: {} }), [])

  const first = cutChangelog(
    '# Changelog\n\n## [Unreleased]\n\n- All.\n\n[unreleased]: x\n',
    '0.1.0',
    '2026-12-01',
  )
  assert.equal(releaseNotes(first, '0.1.0'), '- All.')
  assert.match(first, /^\[0\.1\.0\]: https:\/\/github\.com\/studio\/gamehost\/releases\/tag\/v0\.1\.0$/m)

  assert.throws(() => cutChangelog(CHANGELOG, '1.2.0', '2026-12-01'), /already has \[1\.2\.0\]/)
  assert.throws(
    () => cutChangelog(cutChangelog(CHANGELOG, '1.3.0', '2026-12-01'), '1.4.0', '2026-12-02'),
    /no text under/,
  )
  assert.throws(() => cutChangelog(CHANGELOG, '1.3.0', '1 Dec 2026'), /not a date/)
})

test("cutting a release names its major tag and version in the READMEs' install lines", () => {
  const bumped = bumpInstallLines(README, '2.0.0')
  assert.deepEqual(installLineProblems('2.0.0', { 'README.md': bumped }), [])
  assert.match(bumped, /`studio\/gamehost\/publish@v2`/)
  assert.equal(bumpInstallLines(README, '1.2.0'), README)
})

test("the repository cuts cleanly: its CHANGELOG has text to release as package.json's version or has released it", async () => {
  const [changelog, version] = [await readRepoFile('CHANGELOG.md'), await packageVersion()]
  const released = changelogSections(changelog).some((s) => s.version === version)
  if (!released) assert.doesNotThrow(() => cutChangelog(changelog, version, '2026-12-01'))
})
