// The files a release is checked against, read from the repository's root.
import { appendFile, readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ACTIONS } from '../../src/inputs/table.ts'

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/** The READMEs a user copies install lines from: the root one and each action folder's. */
export const README_FILES = [
  'README.md',
  ...ACTIONS.filter((a) => a !== 'deploy').map((a) => `${a}/README.md`),
]

export async function packageVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { version: string }
  return pkg.version
}

export async function readRepoFile(file: string): Promise<string> {
  return readFile(path.join(root, file), 'utf8')
}

/** The READMEs and docs/*.md, by path: what a user copies workflows and install lines from. */
export async function readmes(): Promise<Record<string, string>> {
  const docs = (await readdir(path.join(root, 'docs'))).filter((f) => f.endsWith('.md')).sort()
  const files = [...README_FILES, ...docs.map((f) => `docs/${f}`)]
  const texts = await Promise.all(files.map((file) => readRepoFile(file)))
  return Object.fromEntries(files.map((file, i) => [file, texts[i]!]))
}

/** Sets a step output when run by GitHub Actions (GITHUB_OUTPUT); prints it otherwise. */
export async function setOutput(name: string, value: string): Promise<void> {
  const file = process.env.GITHUB_OUTPUT
  if (file) await appendFile(file, `${name}=${value}\n`)
  else console.log(`${name}=${value}`)
}
