// What a release checks before it tags, publishes and announces anything: the tag is `v` + package.json's
// version, the CHANGELOG has a dated section for that version, and the READMEs' install lines name what
// the release makes (`studio/gamehost...@v<major>`, `npm install --global gamehost@<version>`).
// Pure functions over text: scripts/release/check.ts and notes.ts read the files.

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/

/** The tags a release of `version` makes: `vX.Y.Z`, and the major tag `vX` it moves. */
export function releaseTags(version: string): { tag: string; major: string } {
  const match = SEMVER.exec(version)
  if (!match) throw new Error(`'${version}' is not a release version X.Y.Z (no pre-release, no build)`)
  return { tag: `v${version}`, major: `v${match[1]}` }
}

export interface ChangelogSection {
  version: string
  /** YYYY-MM-DD, or undefined when the heading has none (as `## [Unreleased]`). */
  date?: string
  /** The section's text between its heading and the next `## ` heading, trimmed. */
  body: string
}

/** The `## [X.Y.Z] - YYYY-MM-DD` sections of a Keep a Changelog file, in order. */
export function changelogSections(markdown: string): ChangelogSection[] {
  const sections: ChangelogSection[] = []
  const lines = markdown.split(/\r?\n/)
  let current: { version: string; date?: string; lines: string[] } | undefined
  const close = () => {
    if (!current) return
    const { lines: body, ...section } = current
    sections.push({ ...section, body: body.join('\n').trim() })
  }
  for (const line of lines) {
    if (line.startsWith('## ')) {
      close()
      const heading = /^## \[([^\]]+)\](?:\s+-\s+(\S+))?\s*$/.exec(line)
      current = heading ? { version: heading[1]!, date: heading[2], lines: [] } : undefined
      continue
    }
    // Link references ([0.1.0]: https://...) close the last section.
    if (/^\[[^\]]+\]:\s/.test(line)) {
      close()
      current = undefined
      continue
    }
    current?.lines.push(line)
  }
  close()
  return sections
}

/** The release notes of `version`: its CHANGELOG section's text. Throws when there is none. */
export function releaseNotes(changelog: string, version: string): string {
  const section = changelogSections(changelog).find((s) => s.version === version)
  if (!section) throw new Error(`CHANGELOG.md has no section '## [${version}] - YYYY-MM-DD'`)
  return section.body
}

/** What `studio/gamehost...@<ref>` and `npm install --global gamehost@<version>` say in a README. */
export function installLines(readme: string): { uses: string[]; npm: string[] } {
  const uses = [...readme.matchAll(/studio\/gamehost(?:\/[a-z-]+)?@([^\s`'")\]]+)/g)].map((m) => m[1]!)
  const npm = [...readme.matchAll(/npm (?:install|i) (?:--global|-g) gamehost@(\S+)/g)].map((m) => m[1]!)
  return { uses, npm }
}

export interface ReleaseInput {
  /** package.json's version. */
  version: string
  /** The tag being released (`GITHUB_REF_NAME` on a tag push); undefined: not checked. */
  tag?: string
  changelog: string
  /** Each README by its path. */
  readmes: Record<string, string>
}

/** Every reason the release of `version` must not go out: empty when it may. */
export function releaseProblems(input: ReleaseInput): string[] {
  const problems: string[] = []
  let tags: { tag: string; major: string }
  try {
    tags = releaseTags(input.version)
  } catch (error) {
    return [`package.json's version: ${(error as Error).message}`]
  }
  if (input.tag !== undefined && input.tag !== tags.tag) {
    problems.push(`the tag '${input.tag}' is not package.json's version: it would be '${tags.tag}'`)
  }
  const section = changelogSections(input.changelog).find((s) => s.version === input.version)
  if (!section) {
    problems.push(`CHANGELOG.md has no section '## [${input.version}] - YYYY-MM-DD'`)
  } else {
    if (!section.date || !/^\d{4}-\d{2}-\d{2}$/.test(section.date))
      problems.push(
        `CHANGELOG.md's section [${input.version}] has no date (## [${input.version}] - YYYY-MM-DD)`,
      )
    if (!section.body) problems.push(`CHANGELOG.md's section [${input.version}] is empty`)
  }
  problems.push(...installLineProblems(input.version, input.readmes))
  return problems
}

/** The READMEs' install lines that do not name what the release of `version` makes. */
export function installLineProblems(version: string, readmes: Record<string, string>): string[] {
  const { major } = releaseTags(version)
  const problems: string[] = []
  for (const [file, text] of Object.entries(readmes)) {
    const { uses, npm } = installLines(text)
    for (const ref of new Set(uses.filter((ref) => ref !== major)))
      problems.push(`${file} uses studio/gamehost@${ref}: the release moves ${major}`)
    for (const pinned of new Set(npm.filter((v) => v !== version)))
      problems.push(`${file} installs gamehost@${pinned}: the release publishes ${version}`)
  }
  return problems
}

const REPOSITORY = 'https://github.com/studio/gamehost'

/**
 * The CHANGELOG with its Unreleased section released as `version` on `date`: the section's text moves
 * under `## [version] - date`, a new empty Unreleased section is left above it, and the link references
 * compare the new tag with the last one.
 */
export function cutChangelog(changelog: string, version: string, date: string): string {
  const { tag } = releaseTags(version)
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) throw new Error(`'${date}' is not a date YYYY-MM-DD`)
  const sections = changelogSections(changelog)
  if (sections.some((s) => s.version === version)) throw new Error(`CHANGELOG.md already has [${version}]`)
  const unreleased = sections.find((s) => s.version === 'Unreleased')
  if (!unreleased?.body) throw new Error('CHANGELOG.md has no text under ## [Unreleased] to release')
  const previous = sections.find((s) => s.version !== 'Unreleased')
  const text = changelog
    .replace(/^## \[Unreleased\][ \t]*$/m, `## [Unreleased]\n\n## [${version}] - ${date}`)
    .replace(/^\[unreleased\]:.*$/im, `[unreleased]: ${REPOSITORY}/compare/${tag}...HEAD`)
  const link = previous
    ? `[${version}]: ${REPOSITORY}/compare/v${previous.version}...${tag}`
    : `[${version}]: ${REPOSITORY}/releases/tag/${tag}`
  return text.replace(/^(\[unreleased\]:.*)$/im, `$1\n${link}`)
}

/** A README with its install lines naming what the release of `version` makes. */
export function bumpInstallLines(readme: string, version: string): string {
  const { major } = releaseTags(version)
  return readme
    .replace(/(studio\/gamehost(?:\/[a-z-]+)?)@v\d+\b/g, `$1@${major}`)
    .replace(/(npm (?:install|i) (?:--global|-g) gamehost@)\d+\.\d+\.\d+/g, `$1${version}`)
}
