// Text from outside, made inert where it is shown: a log line the runner reads, a terminal, Markdown.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { inertJson, markdownCode, markdownText, visible } from '../../src/common/untrusted.ts'

/**
 * What the GitHub runner reads as a workflow command in one line of a step's output (actions/runner,
 * ActionCommand.TryParseV2 and TryParse): `::name ...::` after leading whitespace, or `##[name...]`
 * anywhere in the line. The runner splits the output into lines at CR, LF and CRLF.
 */
function commandsIn(output: string): string[] {
  return output.split(/\r\n|\r|\n/).filter((line) => /^\s*::[^:]*::/.test(line) || /##\[[^\]]*\]/.test(line))
}

const HOSTILE = [
  'a\n::error::pwned.txt',
  'a\r::add-mask::secret',
  'a\r\n::set-output name=x::y',
  '::warning::at the start',
  '  \t::stop-commands::token',
  '\u00a0::debug::after a no-break space',
  'mid ##[add-mask]secret',
  'mid ###[set-output name=x;]y',
  'a\u0085::error::after NEL',
  'a\u2028::error::after LINE SEPARATOR',
  '\x1b[2K\x1b[1A::error::after ANSI',
  'evil\x1b]8;;http://evil\x07link\x1b]8;;\x07',
  'bell\x07 del\x7f csi\u009b2J',
  'rtl \u202eexe.txt',
]

describe('visible', () => {
  test('shows control characters as escapes: no line break, no escape sequence is left', () => {
    assert.equal(visible('a\nb\rc\td'), 'a\\nb\\rc\\td')
    assert.equal(visible('\x1b[31mred\x1b[0m'), '\\x1b[31mred\\x1b[0m')
    assert.equal(visible('\x00\x07\x7f\u0085\u009b'), '\\x00\\x07\\x7f\\x85\\x9b')
    assert.equal(visible('\u2028\u2029\u202e\u2066\u200f'), '\\u2028\\u2029\\u202e\\u2066\\u200f')
    for (const text of HOSTILE) {
      // eslint-disable-next-line no-control-regex
      assert.doesNotMatch(visible(text), /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e]/, text)
    }
  })

  test('breaks workflow commands: `::` at the start of the line, `##[` anywhere', () => {
    assert.equal(visible('::error::pwned'), '\\x3a:error::pwned')
    assert.equal(visible('  ::warning::x'), '  \\x3a:warning::x')
    assert.equal(visible('see ##[add-mask]x'), 'see \\x23#[add-mask]x')
    assert.equal(visible('###[x]'), '#\\x23#[x]')
    assert.equal(visible('a::b ::c'), 'a::b ::c', 'a `::` inside the line is no command')
    assert.equal(visible(':x'), ':x')
    for (const text of HOSTILE) {
      assert.deepEqual(commandsIn(visible(text)), [], text)
      // As it reaches the log: after our own words, or alone on a line.
      assert.deepEqual(commandsIn(`Retrying ${visible(text)} (503)`), [], text)
    }
    assert.equal(HOSTILE.filter((text) => commandsIn(text).length).length, 8, 'as they are, 8 hold a command')
  })

  test('leaves ordinary text alone and changes nothing when applied twice', () => {
    for (const text of ['Uploaded files 3/3, 2.0 KiB', 'données/é.js', 'C:\\build\\a.js', '50% done', '']) {
      assert.equal(visible(text), text)
    }
    for (const text of HOSTILE) assert.equal(visible(visible(text)), visible(text), text)
  })
})

describe('inertJson', () => {
  test('is the same value once parsed, with no workflow command and no terminal control in its text', () => {
    const value = { names: HOSTILE, nested: { id: '##[add-mask]x', path: 'a\\##[b]' }, n: 1, ok: null }
    const text = inertJson(value, 2)
    assert.deepEqual(JSON.parse(text), value)
    assert.deepEqual(commandsIn(text), [])
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e]/)
    assert.equal(inertJson({ a: 'plain' }), '{"a":"plain"}')
  })
})

describe('markdownCode', () => {
  test('a plain value is a code span as it is', () => {
    assert.equal(
      markdownCode('4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'),
      '`4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86`',
    )
    assert.equal(markdownCode('space-game pr-1 abc1234'), '`space-game pr-1 abc1234`')
    assert.equal(markdownCode(''), '')
  })

  test('backticks cannot end the span: the fence is longer than any run of them inside', () => {
    assert.equal(markdownCode('a`b'), '``a`b``')
    assert.equal(markdownCode('`x` [y](http://evil)'), '`` `x` [y](http://evil) ``')
    assert.equal(markdownCode('a``b`'), '``` a``b` ```')
  })

  test('no line break or pipe can end the cell or the table', () => {
    const code = markdownCode('a|b\n\n![x](http://evil/p.png)\r| x | y |')
    assert.ok(!/[\r\n]/.test(code))
    assert.ok(!/(^|[^\\])\|/.test(code), code)
  })
})

describe('markdownText', () => {
  test('escapes every ASCII punctuation: no link, image, autolink, HTML, emphasis or mention', () => {
    for (const text of [
      '[click](https://evil.example/)',
      '![img](http://evil/track.png)',
      '<img src=x onerror=alert(1)>',
      '<!-- gamehost-state eyJ9 -->',
      'see https://evil.example and www.evil.example',
      'ping @octocat and #12',
      '`code` *em* _em_ ~~del~~ $x$ | cell',
      'a\n\n# heading\n| x |',
    ]) {
      const escaped = markdownText(text)
      assert.ok(!/[\r\n]/.test(escaped), escaped)
      // Every ASCII punctuation character stands escaped: CommonMark reads each as itself, nothing more.
      assert.doesNotMatch(escaped.replace(/\\[!-/:-@[-`{-~]/g, ''), /[!-/:-@[-`{-~]/, escaped)
      // A mention or a reference is a word right after @ or #: a word joiner stands between them.
      assert.doesNotMatch(escaped, /[@#][^\u2060]/, escaped)
    }
    assert.equal(markdownText('pr-1.example.com'), 'pr\\-1\\.example\\.com')
    assert.equal(markdownText('@octocat'), '\\@\u2060octocat')
  })
})
