import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { test } from 'node:test'
import { parse } from 'yaml'
import { UsageError } from '../../src/api/errors.ts'
import { readInputs } from '../../src/inputs/deploy.ts'
import { readHeaders } from '../../src/inputs/headers.ts'
import { INPUTS } from '../../src/inputs/table.ts'
import { root } from '../support/actions.ts'
import { getter } from '../support/helpers.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const base = { 'api-url': 'http://127.0.0.1:1', token: 't', 'game-id': GAME }

test('a map of glob to one header, in the order given; numbers and booleans as text', () => {
  assert.deepEqual(
    readHeaders(
      [
        '"**/*.html": {X-Robots-Tag: noindex}',
        "'assets/**':",
        '  Cache-Control: public, max-age=31536000, immutable',
        'robots.txt: {X-Robots-Tag: noindex}',
        '"*.json": {X-Version: 3}',
      ].join('\n'),
    ),
    [
      { glob: '**/*.html', name: 'X-Robots-Tag', value: 'noindex' },
      { glob: 'assets/**', name: 'Cache-Control', value: 'public, max-age=31536000, immutable' },
      { glob: 'robots.txt', name: 'X-Robots-Tag', value: 'noindex' },
      { glob: '*.json', name: 'X-Version', value: '3' },
    ],
  )
})

test('empty, blank or only comments: no headers', () => {
  for (const raw of ['', '  \n', '# none yet', '{}'])
    assert.deepEqual(readHeaders(raw), [], JSON.stringify(raw))
})

const bad: Array<[string, string, RegExp]> = [
  [
    'two headers for one glob',
    '"**/*.html": {Cache-Control: no-cache, X-Frame-Options: DENY}',
    /^headers: '\*\*\/\*\.html' has 2 headers \(Cache-Control, X-Frame-Options\): the service stores one header per glob/,
  ],
  ['bad YAML', '"**/*.html": {Cache-Control: no-cache', /^headers is not valid YAML \(/],
  ['an unquoted glob YAML reads as an alias', '**/*.html: {Cache-Control: no-cache}', /quote each glob/],
  [
    'the same key twice',
    'a.html: {A: b}\na.html: {A: c}',
    /^headers is not valid YAML \(Map keys must be unique/,
  ],
  ['not a map', '- "**/*.html"', /^headers must be a map of glob to one header, .*; it is a list/],
  ['a header as text', '"*.html": "Cache-Control: no-cache"', /^headers: '\*\.html' must map to one header/],
  ['no header', '"*.html": {}', /^headers: '\*\.html' has no header/],
  ['no value', '"*.html": {Cache-Control: }', /^headers: '\*\.html' header 'Cache-Control' has no value/],
  ['a list as value', '"*.html": {Link: [a, b]}', /^headers: '\*\.html' header 'Link' must have one value/],
  [
    'a bad glob',
    '"**.html": {Cache-Control: no-cache}',
    /^headers: '\*\*\.html' is not a glob the service takes/,
  ],
  [
    'a glob from /',
    '"/index.html": {Cache-Control: no-cache}',
    /^headers: '\/index\.html' starts with '\/'.*'index\.html'/,
  ],
  ['an empty glob', '"": {Cache-Control: no-cache}', /^headers: an empty glob matches nothing/],
  [
    'globs the service takes for one',
    '"a/**/b": {A: x}\n"a/**/**/b": {A: y}',
    /^headers: 'a\/\*\*\/b' and 'a\/\*\*\/\*\*\/b' are the same glob to the service/,
  ],
  [
    'a value too long',
    `"*.html": {Content-Security-Policy: "${'x'.repeat(1025)}"}`,
    /^headers: '\*\.html' header 'Content-Security-Policy' has a value of 1025 bytes; the service takes at most 1024/,
  ],
  [
    'a name too long',
    `"*.html": {${'X'.repeat(513)}: a}`,
    /^headers: '\*\.html': the header name is longer than 512 bytes/,
  ],
  [
    'a name with a space',
    '"*.html": {"Cache Control": a}',
    /^headers: '\*\.html' header 'Cache Control' is not a header name/,
  ],
  ['a line break in a value', '"*.html": {X-A: "a\\nb"}', /line break or control character/],
  [
    'too many routes',
    Array.from({ length: 11 }, (_, i) => `"level-${i}.html": {X-Robots-Tag: noindex}`).join('\n'),
    /^headers has 11 globs; the CDN reads only the first 10 routes of a version/,
  ],
]
for (const [name, raw, message] of bad) {
  test(`refused: ${name}`, () => {
    assert.throws(
      () => readHeaders(raw),
      (e: unknown) => e instanceof UsageError && message.test(e.message),
    )
  })
}

test('a value of 1024 bytes and a name of 512 are taken', () => {
  const [rule] = readHeaders(`"*.html": {${'X'.repeat(512)}: "${'é'.repeat(512)}"}`)
  assert.equal(rule?.name.length, 512)
  assert.equal(Buffer.byteLength(rule.value), 1024)
})

test('the deploy inputs: web-engine and headers', () => {
  const published = { ...base, path: 'build', namespace: 'pr-1' }
  const inputs = readInputs(getter(published))
  assert.equal(inputs.site.webEngine, 'auto')
  assert.deepEqual(inputs.site.headers, [])
  const set = readInputs(getter({ ...published, 'web-engine': 'unity', headers: '"*.html": {A: b}' }))
  assert.equal(set.site.webEngine, 'unity')
  assert.deepEqual(set.site.headers, [{ glob: '*.html', name: 'A', value: 'b' }])
  assert.throws(
    () => readInputs(getter({ ...published, 'web-engine': 'unreal' })),
    /^UsageError: web-engine 'unreal' must be one of auto, unity, godot, none$/,
  )
  // Headers are routes of the published version: nothing is published without a namespace.
  assert.throws(
    () => readInputs(getter({ ...base, path: 'build', headers: '"*.html": {A: b}' })),
    /^UsageError: headers are routes of the published version: they need path and namespace/,
  )
  assert.throws(
    () => readInputs(getter({ ...published, publish: 'false', headers: '"*.html": {A: b}' })),
    /with publish on/,
  )
})

test('a header the CDN drops on pages is refused on a glob of pages only, saying what reaches the browser', () => {
  const cases: Array<[string, RegExp]> = [
    [
      '"**/*.html": {Cache-Control: no-cache}',
      /^headers: '\*\*\/\*\.html' header 'Cache-Control' never reaches a browser: '\*\*\/\*\.html' matches only pages \(\/, paths ending in \/, and \*\.html\), and on pages the CDN sends Cache-Control: no-cache, no-store in its place after the routes' headers\. Remove it: pages are never cached$/,
    ],
    [
      '"index.html": {Content-Security-Policy: "default-src \'self\'"}',
      /removes Content-Security-Policy .*<meta http-equiv="Content-Security-Policy"/,
    ],
    [
      '"docs/": {x-frame-options: DENY}',
      /^headers: 'docs\/' header 'x-frame-options' never reaches a browser: .*removes X-Frame-Options/,
    ],
    ['"*.html": {X-XSS-Protection: "1"}', /removes X-XSS-Protection/],
  ]
  for (const [raw, message] of cases) {
    assert.throws(
      () => readHeaders(raw),
      (e: unknown) => e instanceof UsageError && message.test(e.message),
      raw,
    )
  }
  // Other headers on pages, and these headers on globs of other files (or of both: warned about when
  // the files are known), are taken.
  for (const raw of [
    '"**/*.html": {X-Robots-Tag: noindex}',
    '"assets/**": {Cache-Control: max-age=60}',
    '"**": {Cache-Control: max-age=60}',
    '"*.htm": {Content-Security-Policy: x}',
    '"Build/*": {X-Frame-Options: DENY}',
  ])
    assert.equal(readHeaders(raw).length, 1, raw)
})

test("the headers input's example (action.yml, --help) is accepted, and sets no header the CDN drops on pages", async () => {
  const yml = parse(await readFile(`${root}/action.yml`, 'utf8')) as {
    inputs: Record<string, { description: string }>
  }
  const examples = [yml.inputs.headers!.description, INPUTS.Headers.description].map(
    (text) => / like '([^']+)'/.exec(text.replace(/\s+/g, ' '))?.[1],
  )
  for (const example of examples) {
    assert.ok(example, 'the description shows an example')
    const rules = readHeaders(example)
    assert.ok(rules.length > 0, example)
    for (const rule of rules) {
      assert.ok(
        !/^(cache-control|content-security-policy|x-frame-options|x-xss-protection)$/i.test(rule.name) ||
          !/html|\/$/.test(rule.glob),
        `${example}: a header the CDN drops on pages, on a glob of pages`,
      )
    }
  }
})
