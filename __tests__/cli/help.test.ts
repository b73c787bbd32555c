// The CLI's --help (grouped as the README groups the inputs, wrapped to the width), its suggestions
// for a mistyped name, and its naming of inputs as flags in the messages the readers make.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { ACTION_NAMING, nameInputsAs } from '../../src/common/input-naming.ts'
import { readInputs } from '../../src/inputs/deploy.ts'
import { inputsOf } from '../../src/inputs/table.ts'
import { FLAG_NAMING } from '../../src/cli/command.ts'
import { COMMANDS } from '../../src/cli/commands.ts'
import { commandHelp, helpWidth, mainHelp, wrap, wrapCommand } from '../../src/cli/help.ts'
import { nearest } from '../../src/cli/suggest.ts'

const deploy = COMMANDS.find((c) => c.name === 'deploy')!

describe('--help', () => {
  for (const width of [80, 60, 132]) {
    test(`no line of any help is wider than ${width} columns`, () => {
      for (const text of [mainHelp(COMMANDS, width), ...COMMANDS.map((c) => commandHelp(c, width))]) {
        const long = text.split('\n').filter((line) => line.length > width)
        assert.deepEqual(long, [], text.split('\n')[0])
      }
    })
  }

  test("80 columns when standard output is not a terminal; the terminal's width when it is", () => {
    assert.equal(helpWidth({ isTTY: false, columns: 200 }), 80)
    assert.equal(helpWidth({}), 80)
    assert.equal(helpWidth({ isTTY: true, columns: 120 }), 120)
  })

  test("deploy's flags are grouped as the README's inputs: required, common, advanced, then the CLI's own", () => {
    const text = commandHelp(deploy, 80)
    const titles = text.split('\n').filter((line) => /^[A-Z][a-z]+ flags:$/.test(line))
    assert.deepEqual(titles, ['Required flags:', 'Common flags:', 'Advanced flags:', 'Output flags:'])
    const section = (title: string) => {
      const lines = text.split('\n')
      const start = lines.indexOf(title) + 1
      const end = lines.findIndex((line, index) => index >= start && line === '')
      return lines.slice(start, end).join('\n')
    }
    assert.match(section('Required flags:'), /--api-url/)
    assert.match(section('Required flags:'), /--game-id/)
    assert.match(section('Common flags:'), /--path <dir>/)
    assert.match(section('Common flags:'), /--namespace <name-id>/)
    assert.match(section('Advanced flags:'), /--concurrency <n>/)
    assert.doesNotMatch(section('Common flags:'), /--concurrency/)
    // The common group is the short one a newcomer reads: most flags are advanced.
    const count = (title: string) =>
      section(title)
        .split('\n')
        .filter((l) => l.startsWith('  -')).length
    assert.ok(count('Common flags:') <= 12, `${count('Common flags:')} common flags`)
    assert.ok(count('Advanced flags:') > count('Common flags:'))
    // Every input of the deploy action that has a flag is in one of the groups.
    const listed = inputsOf('deploy').filter(
      (row) => row.flag && (row.flag.commands ?? row.actions).includes('deploy'),
    )
    for (const row of listed) assert.match(text, new RegExp(`--(\\[no-\\])?${row.name}\\b`), row.name)
  })

  test('a long help line wraps under its column; a long example continues with a backslash', () => {
    assert.deepEqual(wrap('aaa bbb ccc', 8, '> ', '  '), ['> aaa', '  bbb', '  ccc'])
    const lines = wrapCommand(
      "gamehost deploy --api-url https://api.example.com --game-id 4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86 --files '!**/*.map'",
      60,
    )
    assert.ok(
      lines.every((line) => line.length <= 60),
      lines.join('\n'),
    )
    assert.ok(lines.slice(0, -1).every((line) => line.endsWith(' \\')))
    // A flag keeps its value on its line; a quoted word stays whole.
    assert.ok(lines.some((line) => line.includes('--game-id 4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86')))
    assert.ok(lines.some((line) => line.includes("--files '!**/*.map'")))
  })
})

describe('did you mean', () => {
  test('the nearest known name, when one is near enough', () => {
    const flags = deploy.flags.map((f) => f.name)
    assert.equal(nearest('site_name', flags), 'site-name')
    assert.equal(nearest('namespce', flags), 'namespace')
    assert.equal(nearest('dryrun', flags), 'dry-run')
    assert.equal(
      nearest(
        'deploi',
        COMMANDS.map((c) => c.name),
      ),
      'deploy',
    )
    assert.equal(
      nearest(
        'pubilsh',
        COMMANDS.map((c) => c.name),
      ),
      'publish',
    )
    assert.equal(
      nearest(
        'launch',
        COMMANDS.map((c) => c.name),
      ),
      undefined,
    )
    assert.equal(nearest('x', flags), undefined)
  })
})

describe('the inputs named as flags', () => {
  after(() => nameInputsAs(ACTION_NAMING))
  const read = (inputs: Record<string, string>) => () => readInputs((name) => inputs[name] ?? '', {})

  test("the action's names until the CLI names them as its flags", () => {
    const bad = read({
      'api-url': 'http://x',
      'game-id': '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86',
      namespace: 'Staging',
      path: 'b',
    })
    nameInputsAs(ACTION_NAMING)
    assert.throws(
      bad,
      /^UsageError: namespace 'Staging' is not a valid name id: .*\(write namespace: staging\)$/,
    )
    nameInputsAs(FLAG_NAMING)
    assert.throws(
      bad,
      /^UsageError: --namespace 'Staging' is not a valid name id: .*\(write --namespace staging\)$/,
    )
    assert.throws(
      read({ 'game-id': '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86', path: 'b' }),
      /^UsageError: --api-url \(or GAMEHOST_API_URL\) is required/,
    )
    assert.throws(
      read({ 'api-url': 'http://x', 'game-id': 'g', path: 'b' }),
      /^UsageError: --game-id 'g' is not an id/,
    )
  })

  test('a value is written as a shell reads it; a boolean as its flag or its --no- flag', () => {
    nameInputsAs(FLAG_NAMING)
    assert.equal(FLAG_NAMING.assignment('path', 'my build'), "--path 'my build'")
    assert.equal(FLAG_NAMING.assignment('path', 'build/web'), '--path build/web')
    assert.equal(FLAG_NAMING.assignment('site-record', 'false'), '--no-site-record')
    assert.equal(FLAG_NAMING.assignment('allow-older', 'true'), '--allow-older')
    assert.equal(FLAG_NAMING.source('token'), '--token (or GAMEHOST_TOKEN)')
  })
})
