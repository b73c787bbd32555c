// The CDN's route matcher (globMatches) says what the CDN's regular expression says (`*` one or more
// characters but `/`, `**` any), without backtracking: a headers glob with a dozen stars is matched
// against a long path at once.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  globMatches,
  globMatchesOnlyPages,
  globMatchesPages,
  isPage,
  parseGlob,
} from '../../src/api/versions.ts'

/** The CDN's own matcher, as a regular expression: the reference on short paths. */
function reference(glob: string, path: string): boolean {
  const tokens = parseGlob(glob)
  if (!tokens?.length) return false
  const body = tokens
    .map((t) =>
      t === 'any' ? '[^/]+' : t === 'recursive' ? '.*' : t.char.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&'),
    )
    .join('')
  return new RegExp(`^/${body}$`, 'u').test(path)
}

test('globMatches agrees with the CDN regular expression on every glob and path of a small alphabet', () => {
  const globs = ['**', '*', '**/*.br', 'a/*', '*a*', 'a/**/b', '**/a*b', 'Build/*.br', '*/', '**/*/', 'a*/**']
  const paths = ['/', '/a', '/ab', '/a/b', '/a/x/b', '/x.br', '/Build/g.wasm.br', '/a/', '/ba/b', '/é/a']
  let matched = 0
  for (const glob of globs) {
    for (const path of paths) {
      assert.equal(globMatches(glob, path), reference(glob, path), `${glob} against ${path}`)
      if (reference(glob, path)) matched++
    }
  }
  assert.ok(matched > 10 && matched < globs.length * paths.length, 'the pairs both match and do not')
})

test('a headers glob with a star before each of a dozen letters is matched against a long path at once', () => {
  const glob = '**/*a*b*c*d*e*f*g*h*i*j*k*l'
  const long = `/dir/${[...'abcdefghijk'].map((c) => c.repeat(200)).join('')}`
  assert.equal(globMatches(glob, long), false)
  assert.equal(globMatches(glob, `${long}l`), true)
})

test('a page is /, a path ending in /, or *.html, and a glob matches pages, only pages or none', () => {
  for (const page of ['/', '/docs/', '/index.html', '/a/b.html']) assert.ok(isPage(page), page)
  for (const other of ['/a', '/a.htm', '/a.html.br', '/Build/game.wasm']) assert.ok(!isPage(other), other)
  assert.ok(globMatchesOnlyPages('**/*.html') && globMatchesOnlyPages('docs/'))
  assert.ok(!globMatchesOnlyPages('**') && globMatchesPages('**'))
  assert.ok(!globMatchesPages('Build/*.wasm'))
})
