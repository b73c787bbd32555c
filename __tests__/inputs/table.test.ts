// The table of inputs (src/inputs/table.ts) is what every action.yml, every README and the readers
// say: the same inputs for each action, the same defaults, the same required ones; the outputs of
// each action.yml are its README's and the code's. Adding an input is a row in the table, a line in
// action.yml and a line in the README's table (for the deploy: in docs/inputs.md, which has every one,
// and in the README too if it is a common one): this fails when one of them is missing or differs.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, test } from 'node:test'
import { parse } from 'yaml'
import { OUTPUTS } from '../../src/inputs/constants.ts'
import { readInputs, readPullRequestNumber } from '../../src/inputs/deploy.ts'
import { ACTIONS, INPUTS, inputsOf, type ActionName, type InputRow } from '../../src/inputs/table.ts'
import { flagsOf } from '../../src/cli/flags.ts'
import { avatarsOperation } from '../../src/operations/avatars.ts'
import { lobbyOperation } from '../../src/operations/lobby.ts'
import type { Operation } from '../../src/operations/operation.ts'
import { publishOperation } from '../../src/operations/publish.ts'
import { serversOperation } from '../../src/operations/servers.ts'
import { sweepOperation } from '../../src/operations/sweep.ts'
import { validateOperation } from '../../src/operations/validate.ts'
import { root } from '../support/actions.ts'

interface ActionYml {
  inputs?: Record<string, { required?: boolean; default?: string }>
  outputs?: Record<string, unknown>
}

const folder = (action: ActionName) => (action === 'deploy' ? root : path.join(root, action))

async function actionYml(action: ActionName): Promise<ActionYml> {
  return parse(await readFile(path.join(folder(action), 'action.yml'), 'utf8')) as ActionYml
}

/** The rows of the tables of a Markdown text: the first cell's name, and the second cell. */
function rowsOf(markdown: string): Map<string, string> {
  const rows = new Map<string, string>()
  for (const line of markdown.split('\n')) {
    const cells = line.trim().startsWith('|') ? line.trim().slice(1, -1).split('|') : []
    const name = /^`([a-z-]+)`$/.exec(cells[0]?.trim() ?? '')?.[1]
    if (name) {
      assert.ok(!rows.has(name), `${name} is documented once`)
      rows.set(name, cells[1]!.trim())
    }
  }
  return rows
}

/** The rows of the README's tables under `## <heading>` (its ### groups included). */
async function readmeTable(action: ActionName, heading: string): Promise<Map<string, string>> {
  const readme = await readFile(path.join(folder(action), 'README.md'), 'utf8')
  const start = readme.indexOf(`\n## ${heading}\n`)
  assert.ok(start >= 0, `${action}'s README has a ## ${heading} section`)
  return rowsOf(readme.slice(start + heading.length + 5).split('\n## ')[0]!)
}

/** The rows of every table of a file of the repository. */
async function tableRows(file: string): Promise<Map<string, string>> {
  return rowsOf(await readFile(path.join(root, file), 'utf8'))
}

const sorted = (names: Iterable<string>) => [...names].sort()

describe('the table of inputs', () => {
  for (const action of ACTIONS) {
    test(`${action}: action.yml has exactly the table's inputs, defaults and required ones`, async () => {
      const yml = await actionYml(action)
      const rows = inputsOf(action)
      assert.deepEqual(sorted(Object.keys(yml.inputs ?? {})), sorted(rows.map((r) => r.name)))
      for (const row of rows) {
        const input = yml.inputs![row.name]!
        // GitHub reads an input without a default as empty.
        assert.equal(input.default ?? '', row.default, `${action}: the default of ${row.name}`)
        assert.equal(
          input.required === true,
          row.requiredIn?.includes(action) ?? false,
          `${action}: whether ${row.name} is required`,
        )
      }
    })

    test(`${action}: the README's table of inputs documents each, with its default`, async () => {
      const rows = inputsOf(action)
      const shown = (row: InputRow) =>
        row.requiredIn?.includes(action)
          ? 'required'
          : (row.shownDefault ?? (row.default ? `\`${row.default}\`` : 'empty'))
      // The deploy's README shows the required and common inputs; docs/inputs.md every one.
      const full =
        action === 'deploy' ? await tableRows('docs/inputs.md') : await readmeTable(action, 'Inputs')
      assert.deepEqual(sorted(full.keys()), sorted(rows.map((r) => r.name)))
      for (const row of rows) {
        assert.equal(full.get(row.name), shown(row), `${action}: the documented default of ${row.name}`)
      }
      if (action !== 'deploy') return
      const readme = await readmeTable(action, 'Inputs')
      const byName = new Map(rows.map((row) => [row.name, row]))
      for (const [name, value] of readme) {
        assert.ok(byName.has(name), `the README shows ${name}, which is no input of the deploy`)
        assert.equal(value, shown(byName.get(name)!), `the README's default of ${name}`)
      }
      for (const row of rows.filter((r) => r.requiredIn?.includes(action))) {
        assert.ok(readme.has(row.name), `the README shows the required ${row.name}`)
      }
      const text = await readFile(path.join(root, 'README.md'), 'utf8')
      assert.ok(text.includes('](docs/inputs.md)'), 'the README links docs/inputs.md')
    })

    test(`${action}: action.yml, the README and the code have the same outputs`, async () => {
      const yml = await actionYml(action)
      const documented = await readmeTable(action, 'Outputs')
      const code = sorted(Object.values(OUTPUTS[action]))
      assert.deepEqual(sorted(Object.keys(yml.outputs ?? {})), code)
      assert.deepEqual(sorted(documented.keys()), code)
    })
  }

  test('each name is one row', () => {
    const names = Object.values(INPUTS).map((r) => r.name)
    assert.equal(new Set(names).size, names.length)
  })

  test("the CLI's subcommand of each action has a flag for each input but what only an action has", () => {
    const actionOnly = new Set(['comment', 'github-token', 'if-no-token', 'skip-unchanged', 'pull-request'])
    // The sweep asks GitHub from the CLI too: its github-token is a flag.
    const withFlag = (action: ActionName, name: string) => action === 'sweep' && name === 'github-token'
    for (const action of ACTIONS) {
      const flags = flagsOf(action).map((f) => f.name)
      const inputs = inputsOf(action)
        .map((r) => r.name)
        .filter((name) => !actionOnly.has(name) || withFlag(action, name))
      assert.deepEqual(flags, inputs, action)
    }
  })
})

/** The names a reader asks for, given these values (and '' for the rest). */
function namesRead(
  read: (get: (name: string) => string) => unknown,
  values: Record<string, string>,
): string[] {
  const asked = new Set<string>()
  read((name) => {
    asked.add(name)
    return values[name] ?? ''
  })
  return sorted(asked)
}

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const ID = '3f6c2a9e-8b1d-4c7a-9e25-5d0b7a41c8f2'
const connection = { 'api-url': 'http://127.0.0.1:1', token: 'token', 'game-id': GAME }

describe('the readers read the inputs of the table', () => {
  test('deploy: every input but the GitHub token, which only the action reads', () => {
    const read = namesRead(
      (get) => {
        readPullRequestNumber(get)
        return readInputs(get)
      },
      { ...connection, path: 'build', namespace: 'pr-1' },
    )
    assert.deepEqual(
      read,
      sorted(inputsOf('deploy').flatMap((r) => (r.name === 'github-token' ? [] : [r.name]))),
    )
  })

  const operations: Array<[ActionName, Operation<never, unknown>, Record<string, string>]> = [
    ['publish', publishOperation as Operation<never, unknown>, { namespace: 'prod', 'version-id': ID }],
    ['servers', serversOperation as Operation<never, unknown>, { 'environment-id': ID }],
    ['lobby-logs', lobbyOperation as Operation<never, unknown>, { 'namespace-id': ID, 'lobby-id': ID }],
    ['avatars', avatarsOperation as Operation<never, unknown>, {}],
    ['validate', validateOperation as Operation<never, unknown>, { 'group-display-name': 'Night Owls' }],
    [
      'sweep',
      sweepOperation(() => assert.fail('GitHub is not asked while reading')) as Operation<never, unknown>,
      { 'github-token': 'github-token' },
    ],
  ]
  for (const [action, operation, values] of operations) {
    test(`${action}: every input of its action.yml, and no other`, () => {
      const read = namesRead((get) => operation.read(get), { ...connection, ...values })
      assert.deepEqual(read, sorted(inputsOf(action).map((r) => r.name)))
    })
  }
})
