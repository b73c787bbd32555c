import path from 'node:path'
import * as glob from '@actions/glob'
import { isHidden, type Globber } from '../deploy/files.ts'

/** The action's globber: @actions/glob, whose patterns and debug lines GitHub users know. */
export const actionsGlob: Globber = async (root, patterns, includeHidden) => {
  const absolute = patterns.map((p) =>
    p.startsWith('!') ? `!${path.join(root, p.slice(1))}` : path.join(root, p),
  )
  // Hidden names are judged below root. @actions/glob's own option does not even walk hidden folders
  // (a .git of thousands of files), but it also skips everything when root itself is a hidden folder
  // (say .output): only then are hidden names filtered out afterwards.
  const pruneHidden = !includeHidden && !isHidden(path.basename(root))
  const globber = await glob.create(absolute.join('\n'), {
    matchDirectories: false,
    // Links are judged one by one by the scan: a link to a folder outside root is never walked.
    followSymbolicLinks: false,
    implicitDescendants: true,
    excludeHiddenFiles: pruneHidden,
  })
  const found: string[] = []
  for await (const absolutePath of globber.globGenerator()) {
    const shown =
      includeHidden || pruneHidden || !path.relative(root, absolutePath).split(path.sep).some(isHidden)
    if (shown) found.push(absolutePath)
  }
  return found
}
