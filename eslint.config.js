import js from '@eslint/js'
import tseslint from 'typescript-eslint'

// The layers of src/, lowest first: a file imports its own layer and those below it, never one above,
// statically, with import() or in a type. Above them the faces (actions, the only code importing
// @actions/*, and cli) hand the core a logger, a globber and plain options. The emulator stands apart:
// it may use common and the API's types and rules, nothing else of src/.
const LAYERS = ['common', 'api', 'inputs', 'deploy', 'operations']
const ORDER = 'common < api < inputs < deploy < operations < the faces (actions, cli); the emulator apart'
/** @param {string[]} folders */
const sourceOf = (folders) => `/^(@actions\\/|(\\.\\.?\\/)+(.+\\/)?(${folders.join('|')})\\/)/`

/**
 * The rules that keep `folder` from importing @actions/* and each of `forbidden`.
 * @param {string} folder
 * @param {string[]} forbidden
 */
function layerRules(folder, forbidden) {
  const message = `src/${folder} never imports @actions/* or ${forbidden.join(', ')}: the layers run ${ORDER}. Move what both need down, or hand it in from above.`
  const source = sourceOf(forbidden)
  return {
    files: [`src/${folder}/**`],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@actions/*', ...forbidden.map((f) => `**/${f}/**`)], message }] },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: `ImportExpression[source.value=${source}]`, message },
        { selector: `TSImportType[argument.literal.value=${source}]`, message },
      ],
    },
  }
}

const LAYER_RULES = [
  ...LAYERS.map((layer, i) => layerRules(layer, [...LAYERS.slice(i + 1), 'actions', 'cli', 'emulator'])),
  layerRules('emulator', ['inputs', 'deploy', 'operations', 'actions', 'cli']),
]

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'example-site/', '.bench/', '.package/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.js', 'scripts/check-node.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  ...LAYER_RULES,
  {
    // Small modules and functions: no file in src/ over 500 lines, no function over 80.
    files: ['src/**'],
    rules: {
      'max-lines': ['error', { max: 500, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: false, skipComments: false }],
    },
  },
  {
    // What leaves the actions passes the redactor (common/secrets.ts) in one writer each: action.ts's.
    files: ['src/actions/**'],
    ignores: ['src/actions/action.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['setOutput', 'summary', 'setFailed'].map((property) => ({
          object: 'core',
          property,
          message: "action.ts's setOutput, writeReport and runAction redact the run's secrets: use them",
        })),
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='getOctokit']",
          message:
            "GitHub is called through operations/github-client.ts's githubCall, which redacts what it sends",
        },
      ],
    },
  },
  {
    files: ['__tests__/**', 'scripts/**', 'src/cli/index.ts', 'src/emulator/main.ts'],
    rules: {
      'no-console': 'off',
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
)
