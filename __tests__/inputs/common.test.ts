// Messages name inputs as `{input}` in their text (usage`...`, the service's hints): each is named in
// the face's words, what the message quotes from its user is left as it is, and every `{input}`
// written in src/ is an input of the table.
import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { test } from 'node:test'
import { UsageError } from '../../src/api/errors.ts'
import { FLAG_NAMING } from '../../src/cli/command.ts'
import { ACTION_NAMING, nameInputsAs } from '../../src/common/input-naming.ts'
import { usage } from '../../src/inputs/common.ts'
import { inputRow } from '../../src/inputs/table.ts'
import { root } from '../support/actions.ts'

test('usage names each {input} as the face does, and leaves the values it quotes as they are', () => {
  const quoted = '{token}'
  assert.equal(
    usage`{namespace} '${quoted}' is not {version-id}`.message,
    "namespace '{token}' is not version-id",
  )
  nameInputsAs(FLAG_NAMING)
  try {
    const error = usage`{namespace} '${quoted}' is not {version-id}`
    assert.ok(error instanceof UsageError)
    assert.equal(error.message, "--namespace '{token}' is not --version-id")
  } finally {
    nameInputsAs(ACTION_NAMING)
  }
})

test('every {input} a message of src/ names is an input of the table', async () => {
  const files = (await readdir(path.join(root, 'src'), { recursive: true })).filter((file) =>
    file.endsWith('.ts'),
  )
  const named: string[] = []
  for (const file of files) {
    const text = await readFile(path.join(root, 'src', file), 'utf8')
    const messages = [...text.matchAll(/usage`((?:[^`\\]|\\.)*)`|(?:hint|namedInputs)\(\s*(['"])(.*?)\2/gs)]
    for (const [, template, , hint] of messages) {
      for (const [, input] of (template ?? hint ?? '').matchAll(/(?<!\$)\{([a-z][a-z-]*)\}/g))
        named.push(input!)
    }
  }
  assert.ok(
    named.length > 20,
    `only ${named.length} named inputs found: the scan no longer sees the messages`,
  )
  assert.deepEqual(
    named.filter((input) => !inputRow(input)),
    [],
  )
})
