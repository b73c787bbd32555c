// Imported first by the CLI, so that it runs before any module that needs a newer Node: on an older
// one (npm only warns about engines), one line says what to do instead of a TypeError from undici.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(
    `gamehost needs Node.js 22.19 or later; this is Node.js ${process.versions.node}. ` +
      'Install a maintained Node.js (nodejs.org, or your version manager), then run gamehost again.\n',
  )
  process.exit(2)
}
