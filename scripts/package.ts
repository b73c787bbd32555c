// npm run package: bundles every action and the CLI with @vercel/ncc, deterministically.
//
//   src/actions/deploy.ts      -> dist/index.js             (action.yml; the index calls its run())
//   src/actions/<name>.ts      -> dist/<name>/index.js      (<name>/action.yml; the index calls its run())
//   src/cli/index.ts           -> dist/cli/index.js         (the package's bin, executable)
//
// `ncc build` type-checks the whole project (tests included) for every bundle, which is slow and is
// `npm run typecheck`'s job: so the bundles are built with ncc's transpileOnly. transpileOnly needs a
// tsconfig with `module: esnext` (with `nodenext`, a file transpiled on its own becomes CommonJS, which
// breaks top-level await), and ncc takes the tsconfig.json nearest to the entry: so each entry is built
// through a one-line wrapper in a scratch folder holding such a tsconfig
// (node_modules/.cache/gamehost-package, which no tool looks at). One worker process per core builds
// bundles one after another from a shared queue (a warm worker builds faster). ncc's webpack cache is
// off: filling it costs more than it saves on a clean machine.
//
// Each bundle's folder holds exactly what ncc emits for it (index.js, licenses.txt, package.json, and
// <id>.index.js chunks: what a dynamic import() loads only when it runs, like the smoke test's browser driver):
// files left over from an earlier build are removed, and dist/ keeps the other bundles' folders.

import { fork } from 'node:child_process'
import { chmod, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
// In the checkout, at the same place in every one: the bundles' module ids follow the wrappers' paths
// from it, so a clone anywhere builds the very dist/ committed; the wrapper's relative import leads to
// this checkout's sources even where node_modules is a link to another checkout's. Removed after.
const scratch = path.join(root, '.package')

interface Bundle {
  entry: string
  out: string
  /** chmod +x: the CLI, run as a command through its shebang. */
  executable?: boolean
  /** The entry exports run() and does nothing at import: the bundle's index calls it. */
  callsRun?: boolean
}

const BUNDLES: Bundle[] = [
  // The two largest first, so that the small ones fill in behind them.
  { entry: 'src/actions/deploy.ts', out: 'dist', callsRun: true },
  { entry: 'src/cli/index.ts', out: 'dist/cli', executable: true },
  { entry: 'src/actions/servers.ts', out: 'dist/servers', callsRun: true },
  { entry: 'src/actions/lobby-logs.ts', out: 'dist/lobby-logs', callsRun: true },
  { entry: 'src/actions/avatars.ts', out: 'dist/avatars', callsRun: true },
  { entry: 'src/actions/validate.ts', out: 'dist/validate', callsRun: true },
  { entry: 'src/actions/publish.ts', out: 'dist/publish', callsRun: true },
  { entry: 'src/actions/sweep.ts', out: 'dist/sweep', callsRun: true },
]

type Request = { index: number }
type Reply = { index: number; ms: number; error?: string }

interface NccAsset {
  source: string | Buffer
  permissions?: number
}
type Ncc = (
  entry: string,
  options: Record<string, unknown>,
) => Promise<{ code: string; assets: Record<string, NccAsset> }>

async function build(bundle: Bundle, ncc: Ncc): Promise<void> {
  const wrapper = path.join(scratch, `${path.basename(bundle.out)}.ts`)
  const target = path.relative(scratch, path.join(root, bundle.entry)).split(path.sep).join('/')
  // ncc keeps the shebang of the file it is given: the wrapper repeats the entry's.
  const shebang = /^#!.*\n/.exec(await readFile(path.join(root, bundle.entry), 'utf8'))?.[0] ?? ''
  const body = bundle.callsRun ? `import { run } from '${target}'\n\nawait run()\n` : `import '${target}'\n`
  await writeFile(wrapper, `${shebang}${body}`)
  const { code, assets } = await ncc(wrapper, {
    license: 'licenses.txt',
    target: 'es2023',
    quiet: true,
    transpileOnly: true,
    cache: false,
  })
  const out = path.join(root, bundle.out)
  await mkdir(out, { recursive: true })
  const files = new Map<string, string | Buffer>([['index.js', code]])
  for (const [name, asset] of Object.entries(assets)) files.set(name, asset.source)
  // Remove what an earlier build left and this one does not emit (never the folders of other bundles).
  for (const entry of await readdir(out, { withFileTypes: true })) {
    if (entry.isFile() && !files.has(entry.name)) await rm(path.join(out, entry.name))
  }
  for (const [name, source] of files) {
    await mkdir(path.dirname(path.join(out, name)), { recursive: true })
    await writeFile(path.join(out, name), source)
  }
  await chmod(path.join(out, 'index.js'), bundle.executable ? 0o755 : 0o644)
}

/** A worker: builds the bundles it is sent, one at a time, in this process. */
function worker(): void {
  const ncc = createRequire(path.join(root, 'package.json'))('@vercel/ncc') as Ncc
  process.on('message', (message: Request) => {
    const bundle = BUNDLES[message.index]!
    const started = Date.now()
    build(bundle, ncc).then(
      () => process.send!({ index: message.index, ms: Date.now() - started } satisfies Reply),
      (error: unknown) =>
        process.send!({
          index: message.index,
          ms: Date.now() - started,
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        } satisfies Reply),
    )
  })
}

/** The tsconfig of the wrappers: the project's, with ESM output for a file transpiled on its own. */
const SCRATCH_TSCONFIG = {
  extends: path.relative(scratch, path.join(root, 'tsconfig.json')).split(path.sep).join('/'),
  compilerOptions: {
    module: 'esnext',
    moduleResolution: 'bundler',
    rootDir: path.relative(scratch, root),
  },
  include: ['*.ts'],
}

async function main(): Promise<void> {
  const started = Date.now()
  await rm(scratch, { recursive: true, force: true })
  await mkdir(scratch, { recursive: true })
  await writeFile(path.join(scratch, 'tsconfig.json'), JSON.stringify(SCRATCH_TSCONFIG, null, 2) + '\n')
  const count = Math.max(1, Math.min(os.availableParallelism(), BUNDLES.length))
  let next = 0
  let failed = 0
  await Promise.all(
    Array.from({ length: count }, async () => {
      const child = fork(fileURLToPath(import.meta.url), ['--worker'], { stdio: 'inherit' })
      try {
        while (next < BUNDLES.length) {
          const index = next++
          child.send({ index } satisfies Request)
          const reply = await new Promise<Reply>((resolve, reject) => {
            child.once('message', (message: Reply) => resolve(message))
            child.once('exit', (code) => reject(new Error(`a build worker exited (code ${code})`)))
          })
          child.removeAllListeners('exit')
          const bundle = BUNDLES[reply.index]!
          if (reply.error) {
            failed++
            console.error(`✖ ${bundle.entry}: ${reply.error}`)
          } else {
            console.log(`  ${bundle.entry} -> ${bundle.out}/index.js (${(reply.ms / 1000).toFixed(1)} s)`)
          }
        }
      } finally {
        child.kill()
      }
    }),
  )
  console.log(
    `${BUNDLES.length - failed} of ${BUNDLES.length} bundles in ${((Date.now() - started) / 1000).toFixed(1)} s ` +
      `with ${count} workers`,
  )
  await rm(scratch, { recursive: true, force: true })
  if (failed) process.exitCode = 1
}

if (process.argv.includes('--worker')) worker()
else await main()
