import js from '@eslint/js'
import tseslint from 'typescript-eslint'

// The core (everything under src/ but the faces: actions, cli, emulator) never imports @actions/*,
// a face or the emulator, statically or with import(): the faces hand it a logger, a globber and
// plain options.
const CORE = ['src/api/**', 'src/common/**', 'src/deploy/**', 'src/inputs/**', 'src/operations/**']
const FACES = ['@actions/*', '**/actions/**', '**/cli/**', '**/emulator/**']
const FACE_SOURCE = '/^(@actions\\/|(\\.\\.?\\/)+(.+\\/)?(actions|cli|emulator)\\/)/'
const boundary = (folder) =>
  `${folder} is the core: it never imports @actions/*, the actions, the CLI or the emulator. Hand it what it needs (a logger, a globber, plain options) from the face.`

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
  {
    files: CORE,
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: FACES, message: boundary('src/') }] }],
      'no-restricted-syntax': [
        'error',
        { selector: `ImportExpression[source.value=${FACE_SOURCE}]`, message: boundary('src/') },
        { selector: `TSImportType[argument.literal.value=${FACE_SOURCE}]`, message: boundary('src/') },
      ],
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
          selector: "CallExpression[callee.property.name='getOctokit'][arguments.length<3]",
          message: 'getOctokit(token, {}, redactRequests): what is sent to GitHub passes the redactor',
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
