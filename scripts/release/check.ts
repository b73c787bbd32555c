// node scripts/release/check.ts [--tag vX.Y.Z]
// Fails, naming every reason, unless package.json's version may be released: the tag (when given) is
// `v<version>`, CHANGELOG.md has its dated section, and the READMEs install what the release makes.
// Then sets the outputs version, tag and major (GITHUB_OUTPUT, or printed). Run by release.yml; run it
// before pushing a tag.
import { parseArgs } from 'node:util'
import { releaseProblems, releaseTags } from './release.ts'
import { packageVersion, readRepoFile, readmes, setOutput } from './files.ts'

const { values } = parseArgs({ options: { tag: { type: 'string' } } })
const version = await packageVersion()
const problems = releaseProblems({
  version,
  tag: values.tag,
  changelog: await readRepoFile('CHANGELOG.md'),
  readmes: await readmes(),
})
if (problems.length > 0) {
  console.error(`Version ${version} cannot be released:`)
  for (const problem of problems) console.error(`- ${problem}`)
  process.exit(1)
}
const { tag, major } = releaseTags(version)
await setOutput('version', version)
await setOutput('tag', tag)
await setOutput('major', major)
