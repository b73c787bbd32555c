// node scripts/ci/fetch-url.ts <url> <site folder>
// Checks that a deploy's `url` output serves the site it deployed: GETs the URL (index.html) and every
// file of the folder under it, and fails unless each answers 200 with the file's content. The host
// name is resolved to 127.0.0.1 whatever it is (the emulator serves each namespace by its Host header
// under `*.localhost`, which not every runner's resolver knows). CI runs it after each deploy to the
// emulator, on every runner.
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fetchLocally } from '../../src/emulator/index.ts'

/** The site's files, as URL paths relative to the site's root (`assets/levels.json`), sorted. */
export async function siteFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true })
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(folder, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .filter((file) => !file.split('/').some((part) => part.startsWith('.')))
    .sort()
}

/** What differs between what `url` serves and the files of `folder`: empty when it serves them all. */
export async function servedDifferences(url: string, folder: string): Promise<string[]> {
  const base = url.endsWith('/') ? url : `${url}/`
  const files = await siteFiles(folder)
  if (files.length === 0) return [`${folder} holds no file to check`]
  const checks = files.map((file) => ({ url: new URL(file, base).href, file }))
  if (files.includes('index.html')) checks.unshift({ url: base, file: 'index.html' })
  const differences: string[] = []
  for (const check of checks) {
    const expected = await readFile(path.join(folder, check.file), 'utf8')
    const answer = await fetchLocally(check.url)
    if (answer.status !== 200) differences.push(`${check.url}: ${answer.status}, not 200`)
    else if (answer.text !== expected)
      differences.push(`${check.url}: ${answer.text.length} characters, not those of ${check.file}`)
  }
  return differences
}

async function main(): Promise<void> {
  const [url, folder] = process.argv.slice(2)
  if (!url || !folder) {
    console.error('usage: node scripts/ci/fetch-url.ts <url> <site folder>')
    process.exit(2)
  }
  const differences = await servedDifferences(url, folder)
  if (differences.length > 0) {
    console.error(`${url} does not serve ${folder}:`)
    for (const difference of differences) console.error(`- ${difference}`)
    process.exit(1)
  }
  console.log(`${url} serves ${folder}: ${(await siteFiles(folder)).length} files, each as it is`)
}

if (import.meta.main) await main()
