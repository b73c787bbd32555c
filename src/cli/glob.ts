import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { Minimatch, type MinimatchOptions } from 'minimatch'
import { isHidden, relativeSitePath, sitePattern, type Globber } from '../deploy/files.ts'

// @actions/glob's own matching, so that `gamehost deploy --files` selects what the action's `files`
// input does: minimatch with its options, patterns applied in order (a later `!` excludes, a later
// pattern includes again), and a pattern standing for everything below what it names. Unlike
// @actions/glob, it writes nothing to standard output.
const OPTIONS: MinimatchOptions = { dot: true, nobrace: true, nocomment: true, noext: true, nonegate: true }

interface Rule {
  exclude: boolean
  matchers: Minimatch[]
}

function rules(patterns: string[]): Rule[] {
  return patterns.map((raw) => {
    const exclude = raw.startsWith('!')
    const pattern = path.posix.normalize(sitePattern(exclude ? raw.slice(1) : raw))
    const directoryOnly = pattern.endsWith('/')
    const base = pattern.replace(/\/+$/, '')
    const forms = directoryOnly ? [`${base}/**`] : base.endsWith('/**') ? [base] : [base, `${base}/**`]
    return { exclude, matchers: forms.map((form) => new Minimatch(form, OPTIONS)) }
  })
}

/** The CLI's globber: every entry under root but folders, links not followed, matched as @actions/glob matches. */
export const cliGlob: Globber = async (root, patterns, includeHidden) => {
  const compiled = rules(patterns)
  const selected = (relative: string) => {
    let chosen = false
    for (const rule of compiled) {
      if (rule.matchers.some((m) => m.match(relative))) chosen = !rule.exclude
    }
    return chosen
  }
  const found: string[] = []
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (!includeHidden && isHidden(entry.name)) continue
      const absolute = path.join(dir, entry.name)
      if (entry.isDirectory()) await walk(absolute)
      else if (selected(relativeSitePath(root, absolute))) found.push(absolute)
    }
  }
  await walk(root)
  return found
}
