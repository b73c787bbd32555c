import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  createNamespaceProblems,
  describeValidationPath,
  displayNameProblems,
  groupDisplayNameProblems,
  hostNameProblem,
  isValidDomain,
  matchmakerConfigProblems,
  nameIdProblems,
  planParts,
  validationTitle,
} from '../../src/api/rules.ts'

test('name_id: 1 to 16 of [a-z0-9] with single inner dashes', () => {
  assert.deepEqual(nameIdProblems('pr-42'), [])
  assert.deepEqual(nameIdProblems('a'), [])
  assert.deepEqual(nameIdProblems(''), ['too-short'])
  // The service's pattern has the length in it: too long is invalid as well (a pair of paths).
  assert.deepEqual(nameIdProblems('a'.repeat(17)), ['too-long', 'invalid'])
  for (const bad of ['-a', 'a-', 'a--b', 'A', 'a_b', 'a b', 'é'])
    assert.deepEqual(nameIdProblems(bad), ['invalid'], bad)
})

test('display names: bytes, and only single inner spaces', () => {
  assert.deepEqual(displayNameProblems('My game main 1a2b3c4'), [])
  assert.deepEqual(displayNameProblems(''), ['too-short'])
  assert.deepEqual(displayNameProblems('é'.repeat(64)), [])
  assert.deepEqual(displayNameProblems('é'.repeat(65)), ['too-long'])
  for (const bad of [' a', 'a ', 'a  b', 'a\tb', 'a\nb'])
    assert.deepEqual(displayNameProblems(bad), ['invalid'], bad)
  assert.deepEqual(createNamespaceProblems(' x', 'A'), [
    ['display-name', 'invalid'],
    ['name-id', 'invalid'],
  ])
})

test('group display names use their own paths and a 24-byte limit', () => {
  assert.deepEqual(groupDisplayNameProblems('Team Rocket'), [])
  assert.deepEqual(groupDisplayNameProblems('x'.repeat(25)), [['too-long'], ['display-name-invalid']])
  assert.deepEqual(groupDisplayNameProblems(''), [['too-short']])
  assert.deepEqual(groupDisplayNameProblems('a  b'), [['display-name-invalid']])
})

test('matchmaker config bounds', () => {
  assert.deepEqual(matchmakerConfigProblems(1, 1), [])
  assert.deepEqual(matchmakerConfigProblems(32767, 64), [])
  assert.deepEqual(matchmakerConfigProblems(32768, 0), [
    ['lobby-count', 'too-high'],
    ['max-players', 'too-low'],
    ['max-players', 'client', 'too-low'],
    ['max-players', 'vpn', 'too-low'],
    ['max-players', 'proxy', 'too-low'],
    ['max-players', 'tor', 'too-low'],
    ['max-players', 'hosting', 'too-low'],
  ])
  assert.equal(
    describeValidationPath(['max-players', 'vpn', 'too-low']),
    'max_players must be at least 1 (the limit per vpn client)',
  )
  assert.deepEqual(matchmakerConfigProblems(0, 8), [['lobby-count', 'too-low']])
  assert.equal(describeValidationPath(['lobby-count', 'too-high']), 'lobby_count_max must be below 32768')
  assert.equal(validationTitle(['lobby-count', 'too-high']), 'lobby-count too high')
  assert.equal(validationTitle(['display-name-invalid']), 'display name invalid')
})

test('domains: lower-case host names only', () => {
  assert.ok(isValidDomain('play.example.com'))
  for (const bad of ['', 'https://a.com', 'a.com/x', 'A.com', 'a_b.com', 'a'.repeat(256)])
    assert.ok(!isValidDomain(bad), bad)
})

test("host names: the client's stricter check beside the service's own rule", () => {
  // The service (and the emulator) takes these: 1 to 255 of [0-9a-z.-]. None of them can work.
  const cannotWork: Array<[string, RegExp]> = [
    ['.', /empty label/],
    ['a..b', /empty label/],
    ['.example.com', /empty label/],
    ['-play.example.com', /label '-play' starts or ends with '-'/],
    ['play-.example.com', /label 'play-' starts or ends with '-'/],
    ['play.example.com.', /ends with '\.'/],
    [`${'a'.repeat(64)}.com`, /longer than 63 characters/],
    [`${'a.'.repeat(126)}abc`, /longer than 253 characters/],
  ]
  for (const [domain, problem] of cannotWork) {
    assert.ok(isValidDomain(domain), `the service's rule takes ${domain}`)
    assert.match(hostNameProblem(domain) ?? '', problem, domain)
  }
  for (const good of [
    'play.example.com',
    'xn--mnchen-3ya.de',
    'a-b.c0',
    `${'a'.repeat(63)}.com`,
    'localhost',
  ])
    assert.equal(hostNameProblem(good), undefined, good)
  assert.equal(hostNameProblem(`${'a.'.repeat(126)}a`), undefined, '253 characters')
})

test('parts (the emulator, when asked for them): one request under the threshold, 100 MiB parts at or above it', () => {
  const MiB = 1024 * 1024
  assert.deepEqual(planParts(0, 5 * MiB), [[0, 0]])
  assert.deepEqual(planParts(5 * MiB - 1, 5 * MiB), [[0, 5 * MiB - 1]])
  assert.deepEqual(planParts(5 * MiB, 5 * MiB), [[0, 5 * MiB]])
  // The real service's CDN sites: one request per file, whatever its size.
  assert.deepEqual(planParts(700 * MiB, Number.POSITIVE_INFINITY), [[0, 700 * MiB]])
  assert.deepEqual(planParts(250 * MiB, 5 * MiB), [
    [0, 100 * MiB],
    [100 * MiB, 100 * MiB],
    [200 * MiB, 50 * MiB],
  ])
  assert.deepEqual(planParts(10, 4, 4), [
    [0, 4],
    [4, 4],
    [8, 2],
  ])
})
