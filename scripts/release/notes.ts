// node scripts/release/notes.ts [X.Y.Z]
// Prints the CHANGELOG.md section of a version (default package.json's): the GitHub release's notes.
import { releaseNotes } from './release.ts'
import { packageVersion, readRepoFile } from './files.ts'

const version = process.argv[2] ?? (await packageVersion())
try {
  console.log(releaseNotes(await readRepoFile('CHANGELOG.md'), version))
} catch (error) {
  console.error((error as Error).message)
  process.exit(1)
}
