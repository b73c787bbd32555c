// Runs an action's bundle the way the GitHub runner does: a child process with INPUT_* variables,
// GITHUB_OUTPUT / GITHUB_STEP_SUMMARY / GITHUB_EVENT_PATH files and RUNNER_TEMP.
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

export interface ActionRun {
  exitCode: number
  stdout: string
  stderr: string
  outputs: Record<string, string>
  summary: string
}

export interface RunActionOptions {
  /** The bundle, e.g. dist/index.js. */
  entry: string
  inputs: Record<string, string>
  /** Defaults of action.yml the runner would fill in for inputs not given. */
  defaults?: Record<string, string>
  event?: { name: string; payload: unknown }
  env?: Record<string, string>
  cwd?: string
  /** What `${{ github.token }}` in the defaults stands for; default empty. */
  githubToken?: string
  /** Runtime to run it with; default the current one. */
  node?: string
  /** Options for that runtime (the benchmark tries V8 flags); the runner passes none. */
  nodeArgs?: string[]
  /** Called with the child's pid as soon as it runs (the benchmark samples its memory). */
  onSpawn?: (pid: number) => void
  /** Hears the child's standard output as it grows (all of it so far): a test waits on a line. */
  onStdout?: (stdout: string) => void
  /** Copies the child's output to this process while it runs (without ::debug:: lines, as the runner shows it). */
  echo?: boolean
}

export async function runAction(options: RunActionOptions): Promise<ActionRun> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gamehost-runner-'))
  try {
    const files = {
      output: path.join(dir, 'output'),
      summary: path.join(dir, 'summary'),
      event: path.join(dir, 'event.json'),
      state: path.join(dir, 'state'),
      env: path.join(dir, 'env'),
      path: path.join(dir, 'path'),
    }
    for (const file of [files.output, files.summary, files.state, files.env, files.path])
      await writeFile(file, '')
    await writeFile(files.event, JSON.stringify(options.event?.payload ?? {}))
    const inputEnv: Record<string, string> = {}
    const defaults = Object.fromEntries(
      Object.entries(options.defaults ?? {}).map(([k, v]) => [
        k,
        v.replace(/\$\{\{\s*github\.token\s*\}\}/g, options.githubToken ?? ''),
      ]),
    )
    for (const [name, value] of Object.entries({ ...defaults, ...options.inputs })) {
      inputEnv[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] = value
    }
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? os.homedir(),
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKFLOW: 'deploy',
      GITHUB_RUN_ID: '4242',
      GITHUB_RUN_NUMBER: '7',
      GITHUB_RUN_ATTEMPT: '1',
      GITHUB_JOB: 'deploy',
      GITHUB_ACTION: 'gamehost',
      GITHUB_ACTOR: 'octocat',
      GITHUB_REPOSITORY: 'studio/space-game',
      GITHUB_REPOSITORY_OWNER: 'studio',
      GITHUB_EVENT_NAME: options.event?.name ?? 'push',
      GITHUB_EVENT_PATH: files.event,
      GITHUB_SHA: '1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b',
      GITHUB_REF: 'refs/heads/main',
      GITHUB_REF_NAME: 'main',
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_API_URL: 'https://api.github.com',
      GITHUB_WORKSPACE: options.cwd ?? process.cwd(),
      GITHUB_OUTPUT: files.output,
      GITHUB_STEP_SUMMARY: files.summary,
      GITHUB_STATE: files.state,
      GITHUB_ENV: files.env,
      GITHUB_PATH: files.path,
      RUNNER_TEMP: dir,
      RUNNER_OS: 'Linux',
      RUNNER_DEBUG: '',
      ...inputEnv,
      ...options.env,
    }
    const child = spawn(options.node ?? process.execPath, [...(options.nodeArgs ?? []), options.entry], {
      cwd: options.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    if (child.pid !== undefined) options.onSpawn?.(child.pid)
    let stdout = ''
    let stderr = ''
    let pending = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      options.onStdout?.(stdout)
      if (!options.echo) return
      const lines = (pending + chunk.toString()).split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) if (!line.startsWith('::debug::')) process.stdout.write(line + '\n')
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
      if (options.echo) process.stderr.write(chunk)
    })
    const exitCode = await new Promise<number>((resolve, reject) => {
      child.on('error', reject)
      child.on('close', (code) => resolve(code ?? 1))
    })
    if (options.echo && pending) process.stdout.write(pending + '\n')
    return {
      exitCode,
      stdout,
      stderr,
      outputs: parseFileCommands(await readFile(files.output, 'utf8')),
      summary: await readFile(files.summary, 'utf8'),
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** Parses the `name<<DELIMITER` blocks (and plain `name=value` lines) of a GITHUB_OUTPUT file. */
export function parseFileCommands(text: string): Record<string, string> {
  const result: Record<string, string> = {}
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line)
    if (heredoc) {
      const [, name, delimiter] = heredoc
      const value: string[] = []
      while (++i < lines.length && lines[i] !== delimiter) value.push(lines[i]!)
      result[name!] = value.join('\n')
    } else if (line.includes('=')) {
      const at = line.indexOf('=')
      result[line.slice(0, at)] = line.slice(at + 1)
    }
  }
  return result
}

/** The defaults of an action.yml's inputs, as the runner fills them in. */
export async function actionDefaults(actionYml: string): Promise<Record<string, string>> {
  const text = await readFile(actionYml, 'utf8')
  const defaults: Record<string, string> = {}
  let section = ''
  let current = ''
  for (const line of text.split('\n')) {
    const top = /^(\w[\w-]*):/.exec(line)
    if (top) section = top[1]!
    const input = /^ {2}([\w-]+):\s*$/.exec(line)
    if (section === 'inputs' && input) current = input[1]!
    const def = /^ {4}default:\s*(.*)$/.exec(line)
    if (section === 'inputs' && def && current) defaults[current] = unquote(def[1]!.trim())
  }
  return defaults
}

function unquote(value: string): string {
  if (/^'.*'$/.test(value)) return value.slice(1, -1).replace(/''/g, "'")
  if (/^".*"$/.test(value)) return JSON.parse(value) as string
  return value
}
