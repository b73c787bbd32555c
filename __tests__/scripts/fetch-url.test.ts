// scripts/ci/fetch-url.ts: CI's check that a deploy's url serves the site, its host name reached at
// 127.0.0.1 by its Host header, as the emulator serves each namespace.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { after, test } from 'node:test'
import { servedDifferences, siteFiles } from '../../scripts/ci/fetch-url.ts'
import { tempDir, writeTree } from '../support/helpers.ts'

const site = await tempDir()
await writeTree(site, {
  'index.html': '<!doctype html><title>game</title>',
  'game.js': 'start()',
  'assets/levels.json': '{"levels":[1,2]}',
  '.hidden': 'not deployed',
})
const served = new Map<string, string>()
const hosts: string[] = []
// Serves `served` to the Host game--ns.localhost only, as the emulator serves a namespace's site.
const server = createServer((request, response) => {
  hosts.push(request.headers.host ?? '')
  const body = served.get(request.url ?? '')
  const known = request.headers.host === `game--ns.localhost:${port}`
  response.writeHead(known && body !== undefined ? 200 : 404).end(known ? body : 'no such host')
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const { port } = server.address() as AddressInfo
after(() => server.close())
const url = `http://game--ns.localhost:${port}/`

async function serveSite(): Promise<void> {
  served.clear()
  for (const file of await siteFiles(site))
    served.set(`/${file}`, await readFile(path.join(site, file), 'utf8'))
  served.set('/', served.get('/index.html')!)
}

test("the site's files, as URL paths, hidden ones left out as the deploy leaves them", async () => {
  assert.deepEqual(await siteFiles(site), ['assets/levels.json', 'game.js', 'index.html'])
})

test('a url serving every file of the site: no difference, each asked of 127.0.0.1 with its Host', async () => {
  await serveSite()
  hosts.length = 0
  assert.deepEqual(await servedDifferences(url, site), [])
  assert.equal(hosts.length, 4) // the page, and each file
  assert.ok(hosts.every((host) => host === `game--ns.localhost:${port}`))
  assert.deepEqual(await servedDifferences(url.slice(0, -1), site), [], 'the url without its last /')
})

test('a url serving another page, missing a file or another host: each difference named', async () => {
  await serveSite()
  served.set('/game.js', 'start(); other()')
  served.delete('/assets/levels.json')
  assert.deepEqual(await servedDifferences(url, site), [
    `${url}assets/levels.json: 404, not 200`,
    `${url}game.js: 16 characters, not those of game.js`,
  ])
  await serveSite()
  const other = `http://other--ns.localhost:${port}/`
  assert.equal((await servedDifferences(other, site)).length, 4)
  const empty = await tempDir()
  assert.deepEqual(await servedDifferences(url, empty), [`${empty} holds no file to check`])
})
