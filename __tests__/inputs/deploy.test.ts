import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { UsageError, ValidationFailedError } from '../../src/api/errors.ts'
import { DISPLAY_NAME_MAX_BYTES, displayNameProblems } from '../../src/api/rules.ts'
import { defaultSiteName, missingTokenError, readInputs } from '../../src/inputs/deploy.ts'
import { getter } from '../support/helpers.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const VERSION = '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53'
const NS = '3f6c2a9e-8b1d-4c7a-9e25-5d0b7a41c8f2'
const base = { 'api-url': 'http://127.0.0.1:1', token: 't', 'game-id': GAME }

test('defaults', () => {
  const inputs = readInputs(getter({ ...base, namespace: 'pr-1' }), {
    repository: 'studio/my-game',
    ref: 'refs/heads/main',
    sha: '1a2b3c4d5e',
  })
  assert.equal(inputs.site.name, 'my-game main 1a2b3c4')
  assert.equal(inputs.site.nameGiven, false)
  assert.deepEqual(inputs.site.files, ['**'])
  assert.deepEqual(inputs.transfer, {
    concurrency: 192,
    retries: 8,
    maxRetryAfterMs: 120_000,
    requestTimeoutMs: 30_000,
  })
  assert.equal(inputs.site.includeHidden, false)
  assert.equal(inputs.dryRun, false)
  assert.equal(inputs.site.path, undefined)
  // Nothing is published without a site.
  assert.deepEqual(inputs.target, {
    kind: 'name',
    nameId: 'pr-1',
    displayName: 'pr-1',
    versionId: undefined,
    domain: undefined,
    matchmaker: undefined,
    publish: false,
    cdnDomain: undefined,
  })
})

test('a full set of inputs', () => {
  const inputs = readInputs(
    getter({
      ...base,
      path: 'build',
      files: '**/*.html\n\n  # comment\n!secret/**\n',
      'site-name': 'Release 1.2',
      namespace: 'pr-42',
      'version-id': VERSION,
      domain: 'pr-42.example.com',
      'lobby-count-max': '100',
      'max-players': '16',
      concurrency: '32',
      'dry-run': 'true',
    }),
  )
  assert.deepEqual(inputs.site.files, ['**/*.html', '!secret/**'])
  assert.equal(inputs.site.name, 'Release 1.2')
  assert.equal(inputs.site.nameGiven, true)
  assert.deepEqual(inputs.target, {
    kind: 'name',
    nameId: 'pr-42',
    displayName: 'pr-42',
    versionId: VERSION,
    domain: 'pr-42.example.com',
    matchmaker: { lobbyCountMax: 100, maxPlayers: 16 },
    publish: true,
    cdnDomain: undefined,
  })
  assert.equal(inputs.transfer.concurrency, 32)
  assert.equal(inputs.dryRun, true)
})

test('default site names are always valid display names', () => {
  assert.equal(
    defaultSiteName({ repository: 'o/r', ref: 'refs/pull/12/merge', sha: 'abcdef0123' }),
    'r pr-12 abcdef0',
  )
  assert.equal(defaultSiteName({ repository: 'o/r', ref: 'refs/tags/v1.0.0' }), 'r v1.0.0')
  const long = defaultSiteName({ repository: 'o/r', ref: `refs/heads/${'é'.repeat(200)}`, sha: 'abc' })
  assert.ok(Buffer.byteLength(long) <= 128)
  assert.match(defaultSiteName({}), /^gamehost site \d{4}-/)
})

test('a default site name too long for the service cuts the branch, never the short commit', () => {
  const sha = '1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b'
  const branch = `feature/${'very-long-branch-name-'.repeat(8)}end`
  const cut = defaultSiteName({ repository: 'studio/space-game', ref: `refs/heads/${branch}`, sha })
  assert.ok(Buffer.byteLength(cut) <= DISPLAY_NAME_MAX_BYTES, cut)
  assert.ok(cut.startsWith('space-game feature/very-long-branch-name-'), cut)
  assert.ok(cut.endsWith(' 1a2b3c4'), cut)
  assert.deepEqual(displayNameProblems(cut), [])

  const repository = fc.stringMatching(/^[A-Za-z0-9._-]{1,100}$/).map((name) => `owner/${name}`)
  const ref = fc.string({ unit: 'grapheme', maxLength: 300 }).map((name) => `refs/heads/${name}`)
  fc.assert(
    fc.property(repository, ref, fc.stringMatching(/^[0-9a-f]{40}$/), (repository, ref, sha) => {
      const name = defaultSiteName({ repository, ref, sha })
      assert.deepEqual(displayNameProblems(name), [], name)
      assert.ok(name.endsWith(` ${sha.slice(0, 7)}`), name)
      assert.ok(name.startsWith(`${repository.split('/').pop()} `), name)
    }),
    { numRuns: 300 },
  )
})

const bad: Array<[string, Record<string, string>, RegExp]> = [
  ['missing api-url', { ...base, 'api-url': '' }, /^api-url is required/],
  ['api-url not http', { ...base, 'api-url': 'ftp://x' }, /^api-url 'ftp:\/\/x' must be an http/],
  ['api-url not a URL', { ...base, 'api-url': 'nope' }, /^api-url 'nope' is not a URL/],
  [
    'api-url ending in /cloud',
    { ...base, 'api-url': 'https://api.example.com/cloud/' },
    /^api-url 'https:\/\/api\.example\.com\/cloud\/' ends in \/cloud, which every call adds itself: give the base URL, https:\/\/api\.example\.com$/,
  ],
  ['empty game-id', { ...base, 'game-id': ' ' }, /^game-id is required/],
  [
    'namespace too long',
    { ...base, namespace: 'a'.repeat(17), 'version-id': VERSION },
    /^namespace '.*' is longer than 16/,
  ],
  [
    'namespace double dash',
    { ...base, namespace: 'pr--1', 'version-id': VERSION },
    /^namespace 'pr--1' is not a valid/,
  ],
  [
    'if-no-token unknown',
    { ...base, 'if-no-token': 'ignore' },
    /^if-no-token 'ignore' must be one of auto, fail, skip/,
  ],
  ['comment not a boolean', { ...base, comment: 'sure' }, /^comment 'sure' must be true or false/],
  ['version-id alone', { ...base, 'version-id': VERSION }, /^version-id is only used with namespace/],
  ['site-name double space', { ...base, 'site-name': 'a  b' }, /^site-name 'a {2}b' has whitespace/],
  [
    'site-name too long',
    { ...base, 'site-name': 'x'.repeat(129) },
    /^site-name '.*' is longer than 128 bytes/,
  ],
  [
    'namespace display name',
    { ...base, namespace: 'a', 'version-id': VERSION, 'namespace-display-name': 'a  b' },
    /^namespace-display-name 'a {2}b' has whitespace/,
  ],
  ['domain with protocol', { ...base, 'namespace-id': NS, domain: 'https://a.com' }, /has a protocol/],
  ['domain with path', { ...base, 'namespace-id': NS, domain: 'a.com/x' }, /has a path/],
  ['domain upper case', { ...base, 'namespace-id': NS, domain: 'A.com' }, /upper-case.*\(a\.com\)/],
  ['domain without namespace', { ...base, domain: 'a.com' }, /^domain needs namespace or namespace-id/],
  [
    'domain of a dot',
    { ...base, 'namespace-id': NS, domain: '.' },
    /^domain '\.' is not a host name: .*empty label/,
  ],
  [
    'domain with an empty label',
    { ...base, 'namespace-id': NS, domain: 'a..b' },
    /^domain 'a\.\.b' is not a host name/,
  ],
  [
    'domain with a leading hyphen',
    { ...base, 'namespace-id': NS, domain: '-play.example.com' },
    /^domain '-play\.example\.com' is not a host name: its label '-play' starts or ends with '-'/,
  ],
  [
    'domain with a trailing dot',
    { ...base, 'namespace-id': NS, domain: 'play.example.com.' },
    /^domain 'play\.example\.com\.' ends with '\.': leave it out \(play\.example\.com\)/,
  ],
  [
    'domain with a label of 64 characters',
    { ...base, 'namespace-id': NS, domain: `${'a'.repeat(64)}.example.com` },
    /is longer than 63 characters/,
  ],
  [
    'domain of 254 characters',
    { ...base, 'namespace-id': NS, domain: `${'ab.'.repeat(84)}co` },
    /is longer than 253 characters/,
  ],
  [
    'an internationalised domain',
    { ...base, 'namespace-id': NS, domain: 'münchen.de' },
    /^domain 'münchen\.de' is an internationalised name: .*\(punycode\) form, xn--mnchen-3ya\.de$/,
  ],
  [
    'a token with a line break',
    { ...base, token: 'gamehost-secret\nsecond-line' },
    /^token holds a line break \(at character 16 of 27\), which cannot be sent in an HTTP header/,
  ],
  [
    'a token with a control character',
    { ...base, token: 'abc\u0000def' },
    /^token holds a control character/,
  ],
  ['a token with a tab', { ...base, token: 'abc\tdef' }, /^token holds a control character/],
  [
    'a token with a character beyond Latin-1',
    { ...base, token: 'abc→def' },
    /^token holds a character that is not Latin-1/,
  ],
  [
    'lobby-count-max negative',
    { ...base, 'namespace-id': NS, 'lobby-count-max': '-1', 'max-players': '2' },
    /^lobby-count-max '-1' must be a whole number from 0 to 2147483647/,
  ],
  [
    'max-players too big for a signed 32-bit number',
    { ...base, 'namespace-id': NS, 'lobby-count-max': '1', 'max-players': '2147483648' },
    /^max-players '2147483648' must be a whole number from 0 to 2147483647/,
  ],
  [
    'max-players fraction',
    { ...base, 'namespace-id': NS, 'lobby-count-max': '1', 'max-players': '1.5' },
    /^max-players/,
  ],
  ['matchmaker half given', { ...base, 'namespace-id': NS, 'lobby-count-max': '1' }, /go together/],
  [
    'matchmaker without namespace',
    { ...base, 'lobby-count-max': '1', 'max-players': '1' },
    /need namespace or namespace-id/,
  ],
  [
    'concurrency zero',
    { ...base, concurrency: '0' },
    /^concurrency '0' must be a whole number from 1 to 256/,
  ],
  ['concurrency huge', { ...base, concurrency: '100000' }, /^concurrency/],
  ['concurrency text', { ...base, concurrency: 'fast' }, /^concurrency/],
  ['dry-run not a boolean', { ...base, 'dry-run': 'yes' }, /^dry-run 'yes' must be true or false/],
]
for (const [name, values, message] of bad) {
  test(`refuses ${name}, naming the input`, () => {
    assert.throws(
      () => readInputs(getter(values)),
      (error: unknown) => error instanceof UsageError && message.test(error.message),
    )
  })
}

test('a name id written otherwise is refused with the one to write instead', () => {
  const refusal = (namespace: string) => {
    try {
      readInputs(getter({ ...base, namespace }))
    } catch (error) {
      return (error as Error).message
    }
    return ''
  }
  assert.match(refusal('PR-12'), /^namespace 'PR-12' is not a valid name id: .*\(write namespace: pr-12\)$/)
  assert.match(refusal('feature/Login'), /\(write namespace: feature-login\)$/)
  assert.match(refusal('!!!'), /\(like 'pr-42'\)$/)
})

test('a token that cannot be sent is refused without being shown, before any file is read', () => {
  const token = 'gamehost-s3cret\r\nX-Injected: 1'
  assert.throws(
    () => readInputs(getter({ ...base, token, path: '/nonexistent/site' })),
    (error: unknown) =>
      error instanceof UsageError &&
      error.message.startsWith('token holds a line break') &&
      !error.message.includes('s3cret') &&
      !error.message.includes('Injected'),
  )
  // Latin-1 letters go through, as the header allows them; the service judges the token.
  assert.equal(
    readInputs(getter({ ...base, token: 'café-token', path: 'build' })).connection.token,
    'café-token',
  )
})

test('a domain that can work is taken as given', () => {
  for (const domain of ['pr-42.example.com', 'xn--mnchen-3ya.de', `${'a'.repeat(63)}.example.com`])
    assert.deepEqual(readInputs(getter({ ...base, 'namespace-id': NS, domain })).target, {
      kind: 'id',
      namespaceId: NS,
      nameId: undefined,
      versionId: undefined,
      domain,
      matchmaker: undefined,
      publish: false,
      cdnDomain: undefined,
    })
})

test('an empty token is read as empty: whether that fails is decided with the event', () => {
  const site = { path: 'build' }
  assert.equal(readInputs(getter({ ...base, ...site, token: '', 'dry-run': 'true' })).connection.token, '')
  assert.equal(readInputs(getter({ ...base, ...site, token: '' })).connection.token, '')
  assert.match(missingTokenError().message, /^token is empty: .*secrets\.GAMEHOST_TOKEN.*if-no-token: skip/)
})

test('namespace with namespace-id: the namespace by id, with the name to check (provisioning checks that they agree)', () => {
  const inputs = readInputs(getter({ ...base, namespace: 'pr-1', 'version-id': VERSION, 'namespace-id': NS }))
  assert.ok(inputs.target.kind === 'id')
  assert.equal(inputs.target.nameId, 'pr-1')
  assert.equal(inputs.target.namespaceId, NS)
  assert.equal(inputs.target.versionId, VERSION)
})

test('namespace without version-id: the version is left to the service (the latest)', () => {
  const inputs = readInputs(getter({ ...base, namespace: 'pr-1' }))
  assert.ok(inputs.target.kind === 'name')
  assert.deepEqual(
    {
      nameId: inputs.target.nameId,
      displayName: inputs.target.displayName,
      versionId: inputs.target.versionId,
    },
    { nameId: 'pr-1', displayName: 'pr-1', versionId: undefined },
  )
})

test('preview defaults', () => {
  const inputs = readInputs(getter(base), {}, { closing: true })
  assert.equal(inputs.skipUnchanged, true)
  assert.equal(inputs.comment, true)
  assert.equal(inputs.ifNoToken, 'auto')
})

test("a matchmaker config the service's rules reject fails naming the field, before any file is read", () => {
  const error = (() => {
    try {
      return readInputs(
        getter({
          ...base,
          path: '/nonexistent/site',
          namespace: 'mm-bad',
          'lobby-count-max': '40000',
          'max-players': '8',
        }),
      )
    } catch (thrown) {
      return thrown
    }
  })()
  assert.ok(error instanceof ValidationFailedError)
  assert.deepEqual(error.problems, [
    { path: ['lobby-count', 'too-high'], description: 'lobby_count_max must be below 32768' },
  ])
})

test('nothing to do: no path and no namespace, before any file is read; a close needs no path', () => {
  assert.throws(
    () => readInputs(getter(base)),
    /^UsageError: path is empty \(no site to upload\) and nothing is to be provisioned \(namespace, domain, lobby-count-max\): nothing to do/,
  )
  assert.deepEqual(readInputs(getter(base), {}, { closing: true }).target, { kind: 'none' })
})

test('the run context is asked for only when site-name is empty', () => {
  let asked = 0
  const context = () => {
    asked++
    return { repository: 'studio/my-game', ref: 'refs/heads/main', sha: '1a2b3c4d5e' }
  }
  assert.equal(readInputs(getter({ ...base, path: 'b', 'site-name': 'Mine' }), context).site.name, 'Mine')
  assert.equal(asked, 0)
  assert.equal(readInputs(getter({ ...base, path: 'b' }), context).site.name, 'my-game main 1a2b3c4')
  assert.equal(asked, 1)
})

test('cdn-domain: empty leaves it to the service; given, it wins; a domain under it is refused before anything is created', () => {
  const named = { ...base, 'namespace-id': NS }
  const empty = readInputs(getter(named)).target
  assert.ok(empty.kind === 'id')
  assert.equal(empty.cdnDomain, undefined)
  const given = readInputs(getter({ ...named, 'cdn-domain': 'games.example' })).target
  assert.ok(given.kind === 'id')
  assert.equal(given.cdnDomain, 'games.example')
  for (const domain of ['pr-1.games.example', 'games.example']) {
    assert.throws(
      () => readInputs(getter({ ...named, 'cdn-domain': 'http://games.example:8787', domain })),
      (e: unknown) =>
        e instanceof UsageError &&
        e.message.startsWith(`domain '${domain}' is under the service's CDN domain games.example`) &&
        e.message.includes('CDN_INVALID_DOMAIN'),
    )
  }
  // A domain that only ends with the same letters is another domain.
  assert.doesNotThrow(() =>
    readInputs(getter({ ...named, 'cdn-domain': 'games.example', domain: 'mygames.example' })),
  )
})
