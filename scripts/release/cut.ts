// node scripts/release/cut.ts X.Y.Z [--date YYYY-MM-DD]
// Prepares the release of X.Y.Z in the work tree, for review: package.json's (and the lockfile's)
// version, CHANGELOG.md's Unreleased section moved under [X.Y.Z] with the date (default today, UTC),
// and the READMEs' install lines. Then commit it, and push the tag vX.Y.Z (docs/development.md).
import { execFileSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { bumpInstallLines, cutChangelog, releaseTags } from './release.ts'
import { packageVersion, readmes, readRepoFile, root } from './files.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { date: { type: 'string', default: new Date().toISOString().slice(0, 10) } },
})
const version = positionals[0]
if (!version) {
  console.error('usage: node scripts/release/cut.ts X.Y.Z [--date YYYY-MM-DD]')
  process.exit(2)
}
try {
  const { tag } = releaseTags(version)
  const changelog = cutChangelog(await readRepoFile('CHANGELOG.md'), version, values.date)
  if ((await packageVersion()) !== version) {
    // npm's own edit of package.json and package-lock.json; no tag, no commit.
    execFileSync('npm', ['version', version, '--no-git-tag-version'], {
      cwd: root,
      stdio: 'inherit',
      shell: process.platform === 'win32',
    })
  }
  await writeFile(path.join(root, 'CHANGELOG.md'), changelog)
  for (const [file, text] of Object.entries(await readmes())) {
    const bumped = bumpInstallLines(text, version)
    if (bumped !== text) await writeFile(path.join(root, file), bumped)
  }
  console.log(`Prepared ${version}: review the diff, commit it, then push the tag:`)
  console.log(`  git tag ${tag} && git push origin ${tag}`)
} catch (error) {
  console.error((error as Error).message)
  process.exit(1)
}
