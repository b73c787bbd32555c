// scripts/ascii.ts: bundles escaped to ASCII keep every value; the committed bundles are ASCII.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import vm from 'node:vm'
import { asciiOnly } from '../../scripts/ascii.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/** What a script's last expression gives, as JSON. */
const evaluate = (code: string) => JSON.stringify(vm.runInNewContext(code))

describe('asciiOnly', () => {
  test('escapes strings, templates, regular expressions and comments to the same values', () => {
    const source = [
      '// a comment’s quote, −1 and 🛑',
      '/* block: → */',
      "const quote = 'it’s'",
      'const double = "∞ — ✅"',
      'const emoji = `🛑 stop ${quote} ❌`',
      'const nested = `a ${`→ ${double}`} é`',
      'const latin = "café ©"',
      'const pattern = /[’−]+/g',
      'const unicode = /^🛑.$/u;',
      // a character escaped by a backslash, one after an escaped backslash, a line continuation
      "const slashed = ['a\\’b', 'c\\\\’d', /\\’/.test('’'), 'e\\\u2028f', `g\\’`];",
      '[slashed, quote, double, emoji, nested, latin, "x’−’y".replace(pattern, "-"), unicode.test("🛑∞"), emoji.length]',
    ].join('\n')
    const escaped = asciiOnly(source)
    assert.doesNotMatch(escaped, /[\u0080-\uffff]/)
    assert.equal(evaluate(escaped), evaluate(source))
    assert.match(escaped, /\/\/ a comment\\u2019s quote/)
  })

  test('leaves ASCII code as it is', () => {
    const source = "const a = 'plain' // ok\n`t ${a}`"
    assert.equal(asciiOnly(source), source)
  })

  test('refuses a tagged template beyond ASCII, whose raw strings would change', () => {
    assert.throws(() => asciiOnly('String.raw`it’s`'), /tagged template at line 1/)
    assert.equal(asciiOnly('String.raw`plain ${"’"}`').includes('\\u2019'), true)
  })

  test('refuses a character beyond ASCII outside any literal or comment', () => {
    assert.throws(() => asciiOnly('const café = 1\n'), /outside any literal or comment at line 1/)
  })

  test('every committed bundle is ASCII', async () => {
    for (const bundle of [
      'index.js',
      'cli/index.js',
      'servers/index.js',
      'lobby-logs/index.js',
      'avatars/index.js',
      'validate/index.js',
    ]) {
      const code = await readFile(path.join(root, 'dist', bundle), 'utf8')
      assert.doesNotMatch(code, /[\u0080-\uffff]/, `dist/${bundle} holds a character beyond ASCII`)
    }
  })
})
