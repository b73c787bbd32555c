// npm run demo: starts the emulator at its defaults (the real service at its worst: a publish reaches
// the host seconds later, files of 5 MiB or more are multipart), deploys example-site/ with a 6 MiB
// wasm through dist/index.js the way the GitHub runner would, to a new namespace built on what the
// demo game's prod serves, and prints the outputs, the job summary, and what the url output serves.
// `npm run demo -- --smoke-test` (or GAMEHOST_DEMO_SMOKE_TEST=1) also opens the url in this machine's
// Chrome or Chromium and prints what it saw, and where its screenshot is.
import { createHash, randomBytes } from 'node:crypto'
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { fetchLocally, startEmulator } from '../src/emulator/index.ts'
import { actionDefaults, runAction } from './run-action.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const emulator = await startEmulator()
const preview = `demo-${randomBytes(3).toString('hex')}`
// example-site/ and an engine's wasm over the service's 5 MiB multipart threshold.
const site = await mkdtemp(path.join(os.tmpdir(), 'gamehost-demo-'))
await cp(path.join(root, 'example-site'), site, { recursive: true })
const wasm = Buffer.concat([Buffer.from('\0asm\x01\0\0\0'), randomBytes(6 * 1024 * 1024)])
await writeFile(path.join(site, 'game.wasm'), wasm)

const smoke = process.argv.includes('--smoke-test') || process.env.GAMEHOST_DEMO_SMOKE_TEST === '1'
// The runner's temporary folder is removed with the run: the screenshot goes to one that stays.
const shots = smoke ? await mkdtemp(path.join(os.tmpdir(), 'gamehost-demo-screenshot-')) : undefined

console.log(`Emulator of the service listening on ${emulator.url}\n`)
console.log(`Running dist/index.js as the GitHub runner would, deploying example-site/ ...\n`)
const run = await runAction({
  entry: path.join(root, 'dist/index.js'),
  defaults: await actionDefaults(path.join(root, 'action.yml')),
  cwd: root,
  inputs: {
    'api-url': emulator.url,
    token: 'gamehost-demo-token',
    'game-id': '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
    path: site,
    namespace: preview,
    'namespace-display-name': `Demo ${preview}`,
    'lobby-count-max': '64',
    'max-players': '16',
    ...(smoke ? { 'smoke-test': 'true' } : {}),
  },
  ...(shots ? { env: { RUNNER_TEMP: shots } } : {}),
  echo: true,
})

console.log(`\nStep ${run.exitCode === 0 ? 'succeeded' : `failed (exit code ${run.exitCode})`}. Outputs:`)
for (const [name, value] of Object.entries(run.outputs)) console.log(`  ${name.padEnd(13)} ${value}`)
console.log('\nJob summary:')
console.log(summaryAsText(run.summary))

await rm(site, { recursive: true, force: true })
const url = run.outputs.url
if (run.exitCode !== 0 || !url || run.outputs.verified !== 'true') {
  await emulator.close()
  process.exit(1)
}
// What a browser on this machine gets at the url output (it resolves *.localhost to 127.0.0.1).
const page = await fetchLocally(url)
console.log(`\nLive at ${url}`)
console.log(
  `  GET -> ${page.status} ${page.headers.get('content-type')}, title "${/<title>([^<]*)/.exec(page.text)?.[1]}"`,
)
const engine = await fetchLocally(`${url}game.wasm`)
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex').slice(0, 12)
console.log(
  `  GET game.wasm -> ${engine.status} ${engine.headers.get('content-type')}, ${engine.headers.get('content-length')} bytes ` +
    `(sent as a multipart upload's part; SHA-256 ${sha(wasm)}…, seen live by the deploy: verified=${run.outputs.verified})`,
)
if (smoke) {
  // What the browser saw: the smoke test's own line in the log, and its screenshot.
  const seen = run.stdout.split('\n').find((line) => /^Smoke test[ :]/.test(line))
  console.log(
    `\nIn a browser: ${run.outputs['smoke-test']}: ${seen?.replace(/^Smoke test:? /, '') ?? '(nothing said)'}`,
  )
  if (run.outputs.screenshot) console.log(`  Screenshot: ${run.outputs.screenshot}`)
}
if (page.status !== 200 || engine.status !== 200 || (smoke && run.outputs['smoke-test'] === 'failed')) {
  await emulator.close()
  process.exit(1)
}

if (process.stdout.isTTY && !process.env.CI) {
  console.log('\nOpen it in a browser. Press Ctrl-C to stop the emulator.')
  const stop = () => void emulator.close().then(() => process.exit(0))
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
} else {
  await emulator.close()
}

/** The summary's HTML tables as aligned text lines. */
function summaryAsText(html: string): string {
  return html
    .replace(/<h\d>([^<]*)<\/h\d>/g, '\n  $1\n')
    .replace(/<\/t[hd]>\s*<t[hd]>/g, ' | ')
    .replace(/<\/tr>/g, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => `  ${line.trim()}`)
    .join('\n')
}
