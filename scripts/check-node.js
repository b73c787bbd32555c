/* global process, console */
// Run before every npm script that runs TypeScript directly (node file.ts): without Node's type
// stripping (Node 22.18 or later; the `node` devDependency installs Node 24 into node_modules/.bin),
// say why in one line instead of failing with ERR_UNKNOWN_FILE_EXTENSION. Plain JavaScript, so that
// any Node can run it.
const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(
    `gamehost's npm scripts run TypeScript with Node 24 from node_modules/.bin, but this is Node ${process.versions.node}: ` +
      'the `node` devDependency was not installed (npm ci --ignore-scripts skips its install script). ' +
      'Run `npm rebuild node --ignore-scripts=false` once, then the script again.',
  )
  process.exit(1)
}
